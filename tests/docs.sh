#!/bin/sh
# The documents stay true to the code: every section of docs/ that the code cites exists,
# every command and every option its --help names is in docs/commands.md, and the README
# keeps its two quick-start commands and links only to files that exist.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
cd "$top_srcdir" || exit 1

for f in docs/DESIGN.md docs/METHOD.md docs/commands.md; do
    if [ -s "$f" ]; then ok "$f is in the tree"; else not_ok "$f is in the tree"; fi
done

# docs/METHOD.md §N or §N.M: a heading "## N." or "### N.M" of METHOD.md
cites=$(grep -rhoE 'METHOD\.md §[0-9]+(\.[0-9]+)?' src ui tests --include='*.c' --include='*.h' \
    --include='*.sh' --include='*.py' docs README.md | sed 's/.*§//' | sort -u)
missing=
for n in $cites; do
    case $n in
    *.*) grep -q "^### $n " docs/METHOD.md || missing="$missing §$n" ;;
    *) grep -q "^## $n\. " docs/METHOD.md || missing="$missing §$n" ;;
    esac
done
if [ -n "$cites" ] && [ -z "$missing" ]; then ok "every METHOD.md section the code cites exists ($(echo $cites | wc -w) cited)"
else not_ok "every METHOD.md section the code cites exists" "missing:${missing:- (no citations found)}"; fi

# docs/DESIGN.md and a quoted section name: a heading of DESIGN.md
missing=
cites=$(grep -rhoE 'DESIGN\.md "[^"]+"' src ui tests --include='*.c' --include='*.h' --include='*.sh' \
    --exclude=docs.sh | sort -u)
if [ -n "$cites" ]; then
    printf '%s\n' "$cites" | sed 's/.*"\(.*\)"/\1/' > "$TMPDIR_TEST/design"
    while IFS= read -r name; do
        grep -qE "^#+ $name\$" docs/DESIGN.md || missing="$missing \"$name\""
    done < "$TMPDIR_TEST/design"
fi
if [ -n "$cites" ] && [ -z "$missing" ]; then ok "every DESIGN.md section the code cites exists"
else not_ok "every DESIGN.md section the code cites exists" "missing:${missing:- (no citations found)}"; fi

# no citation of a document that is not in the tree
hits=$(grep -rnE '(^|[^/a-z])(METHOD|DESIGN)\.md|model-facts' src ui tests --include='*.c' --include='*.h' \
    --include='*.sh' --include='*.py' | grep -v 'docs/\(METHOD\|DESIGN\)\.md' | grep -v '^tests/docs\.sh:')
if [ -z "$hits" ]; then ok "the code cites docs/ by its path, and no document outside the tree"
else not_ok "the code cites docs/ by its path, and no document outside the tree" "$hits"; fi

# every command of `octopipe --help` and every option of its --help is in docs/commands.md
cmds=$("$OCTOPIPE" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z-]*\) .*/\1/p')
missing=
for c in $cmds; do grep -q "^### octopipe $c\$" docs/commands.md || missing="$missing $c"; done
if [ -n "$cmds" ] && [ -z "$missing" ]; then ok "every command has its section in docs/commands.md ($(echo $cmds | wc -w))"
else not_ok "every command has its section in docs/commands.md" "missing:${missing:- (no commands listed)}"; fi
missing=
for c in $cmds; do
    case $c in
    import) helps="import torch-csv" ;;
    export) helps="export torch-csv
export svg" ;;
    *) helps=$c ;;
    esac
    printf '%s\n' "$helps" > "$TMPDIR_TEST/helps"
    while IFS= read -r h; do
        # shellcheck disable=SC2086
        for o in $("$OCTOPIPE" $h --help 2>&1 | grep -oE '(^|[ [(,])--[a-z][a-z0-9-]*' | sed 's/^[^-]*//' | sort -u); do
            grep -qF -- "$o" docs/commands.md || missing="$missing $h:$o"
        done
    done < "$TMPDIR_TEST/helps"
done
if [ -z "$missing" ]; then ok "every option of every command's --help is in docs/commands.md"
else not_ok "every option of every command's --help is in docs/commands.md" "missing:$missing"; fi

# the README's quick start and its links
for line in './bootstrap && ./octopipe' './bootstrap && make check'; do
    if grep -qF -- "$line" README.md; then ok "README: '$line'"; else not_ok "README: '$line'"; fi
done
missing=
for l in $(grep -oE '\]\([^)#:]+' README.md docs/*.md | sed 's/^\([^:]*\):](\(.*\)/\1 \2/' | tr ' ' '|'); do
    from=${l%%|*} to=${l#*|}
    [ -e "$(dirname "$from")/$to" ] || missing="$missing $from->$to"
done
if [ -z "$missing" ]; then ok "every relative link of the README and docs/ names a file that exists"
else not_ok "every relative link of the README and docs/ names a file that exists" "missing:$missing"; fi
done_testing
