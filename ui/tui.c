/*
 * tui — the terminal loop (see tui.h): one poll() over the keyboard, a self-pipe for
 * signals and the executor's pipes when a run is going, whose timeout is the next
 * autosave, 0 while the tuner has steps to take (one per iteration, so keys still get
 * through between steps), or a short wait while a finished child is being reaped. After
 * every wake-up getch() is drained until ERR (ncurses may hold bytes poll() cannot see)
 * and the screen is drawn once; a stream of events redraws at most every 30 ms.
 *
 * An ESC from curses starts a sequence curses did not know: it is read to its end (with
 * vim's ttimeoutlen, ESC_DELAY_MS, between bytes), taken as the key it means when it is a
 * well-known one (PuTTY, rxvt, the linux console) and otherwise dropped with "unknown
 * key", so none of its bytes is ever replayed as a key that edits the plan.
 *
 * The terminal is restored on every way out: the normal return, exit() (atexit), fatal
 * signals (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL: restore, then die by the same
 * signal) and SIGTERM / SIGHUP / SIGINT (autosave unsaved edits, restore, return).
 */
#include "config.h"
#include "tui.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <unistd.h>

#include "app.h"
#include "theme.h"
#include "view.h"

static volatile sig_atomic_t curses_on;
static int sig_pipe[2] = { -1, -1 };

static void restore_terminal(void)
{
	if (curses_on) {
		curses_on = 0;
		endwin();
	}
}

static void on_fatal(int sig)
{
	static const char msg[] = "octopipe: crashed; the terminal was restored\n";

	runner_emergency_stop();
	restore_terminal();
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_quit_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	if (sig_pipe[1] >= 0 && write(sig_pipe[1], &b, 1) < 0) {
		/* the pipe is full: a quit is pending already */
	}
	errno = saved;
}

static void install_signals(void)
{
	static const int fatal[] = { SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL };
	static const int quit[] = { SIGTERM, SIGHUP, SIGINT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_fatal;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	sa.sa_handler = on_quit_signal;
	for (size_t i = 0; i < sizeof(quit) / sizeof(quit[0]); i++)
		sigaction(quit[i], &sa, NULL);
	/* a child that ends wakes the loop through the same pipe (and is not a quit) */
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
}

static void blit(const struct screen *s)
{
	static chtype *row;
	static int row_cap;

	if (s->w > row_cap) {
		chtype *r = realloc(row, (size_t)s->w * sizeof(*r));

		if (!r)
			return;
		row = r;
		row_cap = s->w;
	}
	for (int y = 0; y < s->h; y++) {
		const struct cell *c = &s->c[(long)y * s->w];

		for (int x = 0; x < s->w; x++)
			row[x] = (chtype)(unsigned char)c[x].ch | (chtype)theme_attr((enum role)c[x].role);
		mvaddchnstr(y, 0, row, s->w);
	}
	wnoutrefresh(stdscr);
	doupdate();
}

/* ---- headless: one frame as text ------------------------------------------------------ */

static int parse_size(const char *s, int *w, int *h)
{
	char *end;
	long a = strtol(s, &end, 10), b;

	if (end == s || *end != 'x')
		return -1;
	b = strtol(end + 1, &end, 10);
	if (*end || a < 1 || b < 1 || a > 1000 || b > 1000)
		return -1;
	*w = (int)a;
	*h = (int)b;
	return 0;
}

static int render(struct app *a, const struct tui_opts *o, FILE *out, struct err *e)
{
	struct screen s = { 0, 0, NULL };
	struct layout l;
	int w, h;
	char *buf;

	if (parse_size(o->render, &w, &h) < 0)
		return err_set(e, ERR_INPUT, "--render: '%s' is not a size like 120x40", o->render);
	if (screen_resize(&s, w, h) < 0 || !(buf = malloc((size_t)w + 1))) {
		screen_release(&s);
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	a->fill_glyphs = true;
	view_layout(a, w, h, &l);
	for (const char *k = o->keys ? o->keys : ""; *k && !a->quit; k++) {
		int key = (unsigned char)*k;

		if (*k == '\\' && k[1]) {
			k++;
			key = *k == 'n' ? '\n' : *k == 'e' ? 27 : *k == 't' ? '\t' : (unsigned char)*k;
		}
		view_key(a, key);
		/* background work (the tuner) finishes before the next key: frames are reproducible */
		for (int n = 0; n < 100000 && app_tick(a); n++) {
			/* one step each */
		}
		view_layout(a, w, h, &l);
	}
	view_draw(a, &s, &l);
	for (int y = 0; y < h; y++) {
		screen_row_text(&s, y, buf);
		fprintf(out, "%s\n", buf);
	}
	free(buf);
	screen_release(&s);
	return 0;
}

/* ---- keys: escape sequences curses does not know ------------------------------------------ */

/* Like vim's ttimeoutlen: how long the bytes of one key may take to arrive. */
#define ESC_DELAY_MS 100

/* The next byte of a sequence, waiting at most ESC_DELAY_MS for it; ERR when none came. */
static int next_byte(void)
{
	int ch = getch();

	if (ch == ERR) {
		struct pollfd pf = { STDIN_FILENO, POLLIN, 0 };

		if (poll(&pf, 1, ESC_DELAY_MS) > 0)
			ch = getch();
	}
	return ch;
}

/* Well-known sequences terminfo often lacks (PuTTY, rxvt, the linux console, a TERM that
 * does not match the terminal), as the keys they mean. */
static int known_sequence(const char *seq)
{
	static const struct { const char *seq; int key; } map[] = {
		{ "[11~", KEY_F(1) }, { "[12~", KEY_F(2) }, { "[13~", KEY_F(3) }, { "[14~", KEY_F(4) },
		{ "[15~", KEY_F(5) }, { "[17~", KEY_F(6) }, { "[18~", KEY_F(7) }, { "[19~", KEY_F(8) },
		{ "[20~", KEY_F(9) }, { "[21~", KEY_F(10) },
		{ "OP", KEY_F(1) }, { "OQ", KEY_F(2) }, { "OR", KEY_F(3) }, { "OS", KEY_F(4) },
		{ "[[A", KEY_F(1) }, { "[[B", KEY_F(2) }, { "[[C", KEY_F(3) }, { "[[D", KEY_F(4) }, { "[[E", KEY_F(5) },
		{ "[1~", KEY_HOME }, { "[7~", KEY_HOME }, { "[H", KEY_HOME }, { "OH", KEY_HOME },
		{ "[4~", KEY_END }, { "[8~", KEY_END }, { "[F", KEY_END }, { "OF", KEY_END },
		{ "[5~", KEY_PPAGE }, { "[6~", KEY_NPAGE },
		{ "[A", KEY_UP }, { "[B", KEY_DOWN }, { "[C", KEY_RIGHT }, { "[D", KEY_LEFT },
		{ "OA", KEY_UP }, { "OB", KEY_DOWN }, { "OC", KEY_RIGHT }, { "OD", KEY_LEFT },
		{ "[1;2C", KEY_SRIGHT }, { "[1;2D", KEY_SLEFT }, { "[c", KEY_SRIGHT }, { "[d", KEY_SLEFT },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(seq, map[i].seq) == 0)
			return map[i].key;
	return ERR;
}

/* After an ESC from getch(): reads the rest of the sequence to its end (CSI: parameters up
 * to a final byte; SS3: one byte) and returns the key it means, 27 for a lone Esc (or an
 * Esc followed by a key that starts no sequence, which is kept for the next getch), or
 * ERR for a sequence nobody knows, described in what. Its bytes are never taken as keys. */
static int read_escape(char *what, size_t n)
{
	char seq[32];
	/* curses gave us the ESC after waiting ESCDELAY for more: what follows is here already
	 * or is not coming, so a lone Esc costs no second wait */
	int len = 0, ch = getch();

	if (ch == ERR)
		return 27;
	if (ch != '[' && ch != 'O') {
		/* not a sequence: Esc, then a key typed quickly after it (Esc Esc, Esc /) */
		ungetch(ch);
		return 27;
	}
	seq[len++] = (char)ch;
	if (ch == '[') {
		ch = next_byte();
		if (ch == '[') {                  /* the linux console's F1-F5: ESC [ [ A..E */
			seq[len++] = '[';
			ch = next_byte();
			if (ch != ERR)
				seq[len++] = (char)ch;
		} else {
			/* parameters and intermediates, then one final byte (ECMA-48) */
			while (ch != ERR && ch >= 0x20 && ch < 0x40 && len < (int)sizeof(seq) - 2) {
				seq[len++] = (char)ch;
				ch = next_byte();
			}
			if (ch != ERR && ch < 0x100)
				seq[len++] = (char)ch;
		}
	} else {
		ch = next_byte();
		if (ch != ERR && ch < 0x100)
			seq[len++] = (char)ch;
	}
	seq[len] = '\0';
	ch = known_sequence(seq);
	if (ch != ERR)
		return ch;
	{
		size_t k = (size_t)snprintf(what, n, "ESC");

		for (int i = 0; i < len && k + 5 < n; i++)
			k += (size_t)snprintf(what + k, n - k, (unsigned char)seq[i] >= 32 && (unsigned char)seq[i] < 127 ?
			                      "%c" : "\\x%02x", (unsigned char)seq[i]);
	}
	return ERR;
}

/* ^Z: the terminal back to the shell, stopped, and the screen again when resumed. */
static void suspend(struct app *a)
{
	struct sigaction sa, old;

	a->autosave_due = app_now();
	app_autosave(a, app_now());
	def_prog_mode();
	restore_terminal();
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTSTP, &sa, &old);
	kill(getpid(), SIGTSTP);
	/* here again after SIGCONT */
	sigaction(SIGTSTP, &old, NULL);
	reset_prog_mode();
	curses_on = 1;
	clearok(curscr, TRUE);
	app_msg(a, R_NORMAL, "resumed");
}

/* ---- the terminal loop ------------------------------------------------------------------ */

static int handle(struct app *a, const struct layout *l, int ch)
{
	if (ch == KEY_RESIZE)
		return KF_RELAYOUT | KF_REDRAW;
	if (ch == KEY_MOUSE) {
		MEVENT ev;

		if (getmouse(&ev) != OK)
			return 0;
		if (ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED))
			return view_mouse(a, l, ev.x, ev.y, 1);
		/* the wheel scrolls the gpu rows; with shift it pans the time axis */
		if (ev.bstate & BUTTON4_PRESSED)
			return view_mouse(a, l, ev.x, ev.y, ev.bstate & BUTTON_SHIFT ? 6 : 4);
#ifdef BUTTON5_PRESSED
		if (ev.bstate & BUTTON5_PRESSED)
			return view_mouse(a, l, ev.x, ev.y, ev.bstate & BUTTON_SHIFT ? 7 : 5);
#endif
		return 0;
	}
	if (ch == 3) /* ^C in raw mode: the same as q */
		ch = 'q';
	if (ch == 27) {
		char what[120];

		ch = read_escape(what, sizeof(what));
		if (ch == ERR) {
			app_msg(a, R_WARN, "unknown key %s ignored (does TERM=%s match the terminal?)", what,
			        getenv("TERM") ? getenv("TERM") : "");
			return KF_REDRAW;
		}
	}
	return view_key(a, ch);
}

#define LIVE_FRAME_S 0.03

static int min_timeout(int a, int b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

static int loop(struct app *a, const struct tui_opts *o, struct err *e)
{
	struct screen s = { 0, 0, NULL };
	struct layout l;
	SCREEN *scr;
	int flags = KF_RELAYOUT | KF_REDRAW, rc = 0;
	double last_draw = 0;
	bool live_dirty = false;
	bool want_color = !o->no_color && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return err_set(e, ERR_INPUT, "the terminal UI needs a terminal on stdin and stdout "
		               "(try 'octopipe sim PLAN', or 'octopipe tui --render 120x40')");
	if (pipe2(sig_pipe, O_CLOEXEC) < 0)
		return err_set(e, ERR_RUNTIME, "pipe: %s", strerror(errno));
	fcntl(sig_pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
	setlocale(LC_ALL, "");
	{
		/* a terminal that cannot address the cursor (TERM=dumb, a printing terminal) would
		 * show a blank or garbled screen: refuse it in words instead */
		int terr = 0;
		const char *term = getenv("TERM");
		bool can = false;

		if (setupterm(NULL, STDOUT_FILENO, &terr) == OK) {
			char *cup = tigetstr("cup");

			can = cup && cup != (char *)-1 && !tigetflag("hc");
			del_curterm(cur_term);
		}
		if (!can) {
			close(sig_pipe[0]);
			close(sig_pipe[1]);
			sig_pipe[0] = sig_pipe[1] = -1;
			return err_set(e, ERR_INPUT, "the terminal '%s' cannot move the cursor, which the UI needs: set TERM "
			               "to the terminal's type (e.g. xterm-256color), or try 'octopipe sim PLAN' or "
			               "'octopipe tui --render 120x40'", term && *term ? term : "(TERM unset)");
		}
	}
	scr = newterm(NULL, stdout, stdin);
	if (!scr)
		return err_set(e, ERR_RUNTIME, "cannot drive the terminal '%s'", getenv("TERM") ? getenv("TERM") : "(TERM unset)");
	curses_on = 1;
	atexit(restore_terminal);
	install_signals();
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(ESC_DELAY_MS);
	curs_set(0);
	if (!o->no_mouse) {
		mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON_SHIFT
#ifdef BUTTON5_PRESSED
		          | BUTTON5_PRESSED
#endif
		          , NULL);
		mouseinterval(0);
	}
	a->fill_glyphs = theme_init(want_color) == THEME_MONO;
	while (!a->quit) {
		struct pollfd pf[4] = { { STDIN_FILENO, POLLIN, 0 }, { sig_pipe[0], POLLIN, 0 } };
		int timeout = -1, ch, npf = 2, wait;
		bool quit_sig = false;
		double now;

		if (flags & KF_RELAYOUT) {
			int rows, cols;

			getmaxyx(stdscr, rows, cols);
			if (screen_resize(&s, cols, rows) < 0) {
				rc = err_set(e, ERR_RUNTIME, "out of host memory");
				break;
			}
			view_layout(a, cols, rows, &l);
		}
		if (flags & KF_REPAINT)
			clearok(curscr, TRUE);
		if (flags & (KF_REDRAW | KF_RELAYOUT | KF_REPAINT)) {
			view_draw(a, &s, &l);
			blit(&s);
			last_draw = app_now();
			live_dirty = false;
		}
		flags = 0;
		if (a->autosave_due > 0) {
			double left = a->autosave_due - app_now();

			timeout = left > 0 ? (int)(left * 1000) + 1 : 0;
		}
		if (live_dirty) {
			int left = (int)((last_draw + LIVE_FRAME_S - app_now()) * 1000) + 1;

			timeout = min_timeout(timeout, left > 0 ? left : 0);
		}
		if ((wait = run_check(a)) >= 0) {
			timeout = min_timeout(timeout, wait);
			flags |= KF_REDRAW;
		}
		if (app_busy(a))
			timeout = 0;
		npf += run_pollfds(a, pf + 2, 2);
		if (poll(pf, (nfds_t)npf, timeout) < 0 && errno != EINTR) {
			rc = err_set(e, ERR_RUNTIME, "poll: %s", strerror(errno));
			break;
		}
		if (pf[1].revents & POLLIN) {
			unsigned char b;

			while (read(sig_pipe[0], &b, 1) == 1)
				quit_sig = quit_sig || b != SIGCHLD;
			if (quit_sig) {
				a->autosave_due = app_now();
				app_autosave(a, app_now());
				break;
			}
			flags |= KF_REDRAW;
		}
		for (int i = 2; i < npf; i++)
			if (pf[i].revents & (POLLIN | POLLHUP | POLLERR))
				live_dirty = run_io(a, pf[i].fd) || live_dirty;
		now = app_now();
		if (live_dirty && now - last_draw >= LIVE_FRAME_S)
			flags |= KF_REDRAW;
		if (a->autosave_due > 0 && now >= a->autosave_due) {
			app_autosave(a, now);
			flags |= KF_REDRAW;
		}
		while ((ch = getch()) != ERR) {
			flags |= handle(a, &l, ch) | KF_REDRAW;
			if (flags & KF_SUSPEND) {
				flags &= ~KF_SUSPEND;
				suspend(a);
				flags |= KF_RELAYOUT | KF_REPAINT;
			}
			if (flags & KF_QUIT)
				break;
		}
		if (!(flags & KF_QUIT) && app_busy(a)) {
			app_tick(a);
			flags |= KF_REDRAW;
		}
	}
	/* stop a run before the terminal comes back, so nothing is left behind */
	run_release(&a->run);
	screen_release(&s);
	restore_terminal();
	delscreen(scr);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
	if (rc == 0 && a->autosaved && app_modified(a))
		fprintf(stderr, "octopipe: unsaved edits are in %s\n", a->as.path);
	return rc;
}

int tui_run(const struct tui_opts *o, FILE *out, struct err *e)
{
	struct app a;
	struct app_open ao = { o->plan, o->model, o->cluster, o->microbatches, o->steps, o->launcher, o->time_scale,
	                       o->run_iters, o->backend, o->share_gpus, o->render != NULL, o->par, o->recompute };
	int rc;

	if (app_init(&a, &ao, e) < 0)
		return -1;
	rc = o->render ? render(&a, o, out, e) : loop(&a, o, e);
	app_release(&a);
	return rc;
}
