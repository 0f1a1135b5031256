# tests/pale.awk, for tests/tui_screen.sh.
# Counts printable cells drawn in a pale foreground (white, pale yellow) on the terminal's
# own background: unreadable on a light background. Input: tmux capture-pane -e.
function sgr(p,   n, a, i) {
    n = split(p, a, ";")
    if (p == "") { fg = -1; bg = -1; rev = 0; return }
    for (i = 1; i <= n; i++) {
        v = a[i] + 0
        if (v == 0) { fg = -1; bg = -1; rev = 0 }
        else if (v == 7) rev = 1
        else if (v == 27) rev = 0
        else if (v == 38 && a[i+1] == 5) { fg = a[i+2] + 0; i += 2 }
        else if (v == 48 && a[i+1] == 5) { bg = a[i+2] + 0; i += 2 }
        else if (v >= 30 && v <= 37) fg = v - 30
        else if (v >= 90 && v <= 97) fg = v - 90 + 8
        else if (v == 39) fg = -1
        else if (v >= 40 && v <= 47) bg = v - 40
        else if (v >= 100 && v <= 107) bg = v - 100 + 8
        else if (v == 49) bg = -1
    }
}
BEGIN { fg = -1; bg = -1; rev = 0; pale[7] = pale[15] = pale[231] = pale[255] = pale[230] = 1
        pale[221] = pale[228] = pale[229] = pale[227] = pale[226] = pale[11] = pale[3] = pale[114] = pale[110] = 1 }
{
    line = $0
    while (length(line) > 0) {
        if (match(line, /^\033\[[0-9;]*m/)) { sgr(substr(line, 3, RLENGTH - 3)); line = substr(line, RLENGTH + 1); continue }
        c = substr(line, 1, 1); line = substr(line, 2)
        if (c != " " && bg == -1 && !rev && (fg in pale)) bad++
    }
}
END { print bad + 0 }
