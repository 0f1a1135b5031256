/*
 * tui — the terminal loop (see tui.h): one poll() over the keyboard, a self-pipe for
 * signals and the executor's pipes when a run is going, whose timeout is the next
 * autosave, 0 while the tuner has steps to take (one per iteration, so keys still get
 * through between steps), or a short wait while a finished child is being reaped. After
 * every wake-up getch() is drained until ERR (ncurses may hold bytes poll() cannot see)
 * and the screen is drawn once; a stream of events redraws at most every 30 ms.
 *
 * Curses hands over raw bytes (keypad off) and keydec decodes them whole: escape
 * sequences with their modifiers, mouse reports, bracketed paste. A paste goes into a
 * prompt as text and is dropped anywhere else; a sequence that is no known key is dropped
 * with "unknown key"; mouse reports are dropped silently when the mouse is off. The modes
 * that make the terminal send them (mouse reports 1000 + SGR 1006, bracketed paste 2004)
 * are set here and reset on every way out.
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
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <unistd.h>

#include "app.h"
#include "fileio.h"
#include "keydec.h"
#include "theme.h"
#include "view.h"

static volatile sig_atomic_t curses_on, modes_on;
static volatile sig_atomic_t mouse_wanted;
static int sig_pipe[2] = { -1, -1 };

/* The terminal's input modes: bracketed paste always, mouse reports unless --no-mouse.
 * write(2), not stdio: the reset runs in signal handlers too. */
static void put_raw(const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void modes_set(void)
{
	fflush(stdout);
	put_raw(mouse_wanted ? "\033[?2004h\033[?1000h\033[?1006h" : "\033[?2004h");
	modes_on = 1;
}

static void modes_reset(void)
{
	if (!modes_on)
		return;
	modes_on = 0;
	put_raw(mouse_wanted ? "\033[?1006l\033[?1000l\033[?2004l" : "\033[?2004l");
}

static void restore_terminal(void)
{
	if (curses_on) {
		curses_on = 0;
		modes_reset();
		endwin();
	}
}

/* A terminal without an alternate screen (vt100, the linux console) keeps the last frame
 * after the UI ends, and the shell's prompt lands in its F-key bar: clear it first. */
static void no_alt_screen_clear(void)
{
	char *smcup = tigetstr("smcup");

	if (curses_on && (!smcup || smcup == (char *)-1)) {
		erase();
		refresh();
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
	/* SIGQUIT too: its default (a core dump) left the alternate screen and the mouse on */
	static const int quit[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_fatal;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	sa.sa_handler = on_quit_signal;
	for (size_t i = 0; i < sizeof(quit) / sizeof(quit[0]); i++)
		sigaction(quit[i], &sa, NULL);
	/* a stop from outside (kill -TSTP) goes through the loop, which gives the terminal
	 * back first, as ^Z does */
	sigaction(SIGTSTP, &sa, NULL);
	/* a child that ends wakes the loop through the same pipe (and is not a quit) */
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
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
	if (screen_resize(&s, w, h) < 0 || !(buf = malloc(SCREEN_ROW_BYTES(w)))) {
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
	modes_set();
	clearok(curscr, TRUE);
	app_msg(a, R_NORMAL, "resumed");
}

/* ---- the terminal loop ------------------------------------------------------------------ */

/* Pasted bytes outside a prompt, dropped; said once when the paste ends. */
static long paste_dropped;

/* A key while the terminal is too small to show anything but that: only quitting acts,
 * and only when nothing is lost (a dialog asking about unsaved edits could not be seen;
 * Ctrl-L and a resize still work). */
static int small_key(struct app *a, int key)
{
	if (key == 12)
		return KF_REPAINT;
	if (key != 'q' && key != 'Q' && key != 3 && key != KEY_F(10))
		return 0;
	if (!app_modified(a)) {
		/* the loop ends on a->quit (KF_QUIT alone only stops the keys after it) */
		a->quit = true;
		return KF_HANDLED | KF_QUIT;
	}
	app_msg(a, R_WARN, "unsaved edits: enlarge the terminal to save or discard them before quitting");
	return KF_REDRAW;
}

static int handle(struct app *a, const struct layout *l, const struct kev *ev)
{
	switch (ev->kind) {
	case KEV_MOUSE:
		return view_mouse(a, l, ev->x, ev->y, ev->button);
	case KEV_PASTE:
		/* text for a prompt or the picker's filter; never keys anywhere else */
		if ((a->mode == MODE_PROMPT || a->mode == MODE_PICKER) && ev->key >= 32 && ev->key != 127)
			return view_key(a, ev->key);
		if (a->mode != MODE_PROMPT && a->mode != MODE_PICKER)
			paste_dropped++;
		return 0;
	case KEV_PASTE_END:
		if (ev->lost)
			app_msg(a, R_WARN, "a paste's end marker never came: the paste was ended %d s after it began, and "
			        "keys act again", KEYDEC_PASTE_MAX_MS / 1000);
		else if (paste_dropped > 0)
			app_msg(a, R_WARN, "pasted text ignored (%ld bytes): a paste goes into a prompt, never taken as keys",
			        paste_dropped);
		paste_dropped = 0;
		return KF_REDRAW;
	case KEV_DROP:
		if (ev->drop == KEV_DROP_REPLY)
			return 0; /* the terminal answering something: no key, nothing to say */
		if (ev->drop == KEV_DROP_ALT)
			app_msg(a, R_WARN, "%s ignored: no command has it (Esc, then a key, is Esc and that key)", ev->what);
		else
			app_msg(a, R_WARN, "unknown key %s ignored (does TERM=%s match the terminal?)", ev->what,
			        getenv("TERM") ? getenv("TERM") : "");
		return KF_REDRAW;
	case KEV_KEY:
		break;
	}
	if (l->too_small)
		return small_key(a, ev->key);
	if (ev->key == 3) /* ^C in raw mode: cancels a prompt, else the same as q */
		return view_key(a, a->mode == MODE_PROMPT || a->mode == MODE_PICKER ? 27 : 'q');
	return view_key(a, ev->key);
}

/* Every decoded event, in order, into flags; false when one quits (the rest are dropped). */
static bool handle_events(struct app *a, const struct layout *l, struct keydec *kd, int *flags)
{
	struct kev ev;

	while (keydec_next(kd, &ev)) {
		*flags |= handle(a, l, &ev) | KF_REDRAW;
		if (*flags & KF_SUSPEND) {
			*flags &= ~KF_SUSPEND;
			suspend(a);
			*flags |= KF_RELAYOUT | KF_REPAINT;
		}
		if (*flags & KF_QUIT) {
			while (keydec_next(kd, &ev)) {
				/* nothing after a quit acts */
			}
			return false;
		}
	}
	return true;
}

/* Reads what curses holds (until ERR) through the decoder; a sequence whose bytes stopped
 * coming for its wait is ended by the clock (a lone Esc, a cut sequence). */
static void drain_input(struct app *a, const struct layout *l, struct keydec *kd, double *last_byte, int *flags)
{
	int ch;

	keydec_clock(kd, (long long)(app_now() * 1000));
	while ((ch = getch()) != ERR) {
		*last_byte = app_now();
		if (ch > 0xff) {
			/* curses' own codes (KEY_RESIZE): not from the terminal's bytes */
			*flags |= (ch == KEY_RESIZE ? KF_RELAYOUT : view_key(a, ch)) | KF_REDRAW;
			continue;
		}
		keydec_feed(kd, ch);
		if (!handle_events(a, l, kd, flags))
			return;
	}
	/* what comes next was not sent with what came so far (the bytes held after a paste's
	 * end are keys now) */
	keydec_idle(kd);
	if (!handle_events(a, l, kd, flags))
		return;
	keydec_clock(kd, (long long)(app_now() * 1000));
	if (keydec_wait_ms(kd) >= 0 && (app_now() - *last_byte) * 1000 >= keydec_wait_ms(kd)) {
		keydec_timeout(kd);
		handle_events(a, l, kd, flags);
	}
}

/* The signals the pipe brought: a stop from outside suspends as ^Z does (the terminal
 * first); true when one of them quits (SIGTERM, SIGHUP, SIGINT, SIGQUIT). */
static bool signals_quit(struct app *a)
{
	unsigned char b;
	bool quit = false;

	while (read(sig_pipe[0], &b, 1) == 1) {
		if (b == SIGTSTP)
			suspend(a);
		else
			quit = quit || b != SIGCHLD;
	}
	return quit;
}

#define LIVE_FRAME_S 0.03

/* ESCDELAY, as curses reads it: how long (ms) the rest of a sequence may take over a slow
 * link before its ESC counts as the Esc key (1 to KEYDEC_SEQ_MS_MAX, else the default) */
static int escdelay_ms(void)
{
	const char *ed = getenv("ESCDELAY");
	char *end;
	long ms;

	if (!ed || !*ed)
		return KEYDEC_SEQ_MS;
	ms = strtol(ed, &end, 10);
	return !*end && ms > 0 && ms <= KEYDEC_SEQ_MS_MAX ? (int)ms : KEYDEC_SEQ_MS;
}

static int min_timeout(int a, int b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* A terminal that cannot address the cursor (TERM=dumb, a printing terminal) would show a
 * blank or garbled screen: refuse it in words instead (the signal pipe is closed then). */
static int terminal_check(struct err *e)
{
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
	return 0;
}

/* How long the loop may sleep in poll (-1: until input): until the autosave is due, the
 * next live frame, the run's next check, a partial key sequence's deadline; 0 while the
 * app has work (tuning). A run check asks for a redraw in *flags. */
static int poll_timeout(struct app *a, const struct keydec *kd, bool live_dirty, double last_draw,
                        double last_byte, int *flags)
{
	int timeout = -1, wait;

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
		*flags |= KF_REDRAW;
	}
	if (keydec_wait_ms(kd) >= 0) {
		int left = (int)((last_byte + keydec_wait_ms(kd) / 1000.0 - app_now()) * 1000) + 1;

		timeout = min_timeout(timeout, left > 0 ? left : 0);
	}
	if (app_busy(a))
		timeout = 0;
	return timeout;
}

static int loop(struct app *a, const struct tui_opts *o, struct err *e)
{
	struct screen s = { 0, 0, NULL };
	struct layout l;
	SCREEN *scr;
	int flags = KF_RELAYOUT | KF_REDRAW, rc = 0;
	double last_draw = 0, last_byte = 0;
	bool live_dirty = false;
	struct keydec kd;
	bool want_color = !o->no_color && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return err_set(e, ERR_INPUT, "the terminal UI needs a terminal on stdin and stdout "
		               "(try 'octopipe sim PLAN', or 'octopipe tui --render 120x40')");
	if (pipe2(sig_pipe, O_CLOEXEC) < 0)
		return err_set(e, ERR_RUNTIME, "pipe: %s", strerror(errno));
	fcntl(sig_pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
	setlocale(LC_ALL, "");
	tui_utf8_term = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	if (terminal_check(e) < 0)
		return -1;
	scr = newterm(NULL, stdout, stdin);
	if (!scr)
		return err_set(e, ERR_RUNTIME, "cannot drive the terminal '%s'", getenv("TERM") ? getenv("TERM") : "(TERM unset)");
	curses_on = 1;
	atexit(restore_terminal);
	install_signals();
	raw();
	noecho();
	nonl();
	/* the bytes as they come: keydec reads every sequence whole */
	keypad(stdscr, FALSE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	keydec_init(&kd, !o->no_mouse);
	kd.seq_ms = escdelay_ms();
	mouse_wanted = !o->no_mouse;
	modes_set();
	/* what the UI opens from now on (F7, o, a recovery) is read only when it is a regular
	 * file: a FIFO with a slow or no writer froze every key, Esc too */
	fileio_regular_only(true);
	a->fill_glyphs = theme_init(want_color) == THEME_MONO;
	while (!a->quit) {
		struct pollfd pf[4] = { { STDIN_FILENO, POLLIN, 0 }, { sig_pipe[0], POLLIN, 0 } };
		int timeout, npf = 2;
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
		if (flags & KF_REPAINT) {
			clearok(curscr, TRUE);
			tui_blit_forget();
		}
		if (flags & (KF_REDRAW | KF_RELAYOUT | KF_REPAINT)) {
			/* a pan shifts the chart's rows on the terminal (blit.c): a slow link gets
			 * only the columns that came into view */
			int shift = tui_pan_shift(a->t0, a->ms_per_col);

			view_draw(a, &s, &l);
			tui_blit_pan(&s, shift);
			last_draw = app_now();
			live_dirty = false;
		}
		flags = 0;
		timeout = poll_timeout(a, &kd, live_dirty, last_draw, last_byte, &flags);
		npf += run_pollfds(a, pf + 2, 2);
		if (poll(pf, (nfds_t)npf, timeout) < 0 && errno != EINTR) {
			rc = err_set(e, ERR_RUNTIME, "poll: %s", strerror(errno));
			break;
		}
		/* the terminal hung up (its master closed without a SIGHUP): every read would
		 * fail at once, a loop at full speed; leave as SIGHUP would */
		if ((pf[0].revents & (POLLHUP | POLLERR | POLLNVAL)) || ((pf[1].revents & POLLIN) && signals_quit(a))) {
			a->autosave_due = app_now();
			app_autosave(a, app_now());
			break;
		}
		if (pf[1].revents & POLLIN)
			flags |= KF_REDRAW;
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
		drain_input(a, &l, &kd, &last_byte, &flags);
		if (!(flags & KF_QUIT) && app_busy(a)) {
			app_tick(a);
			flags |= KF_REDRAW;
		}
	}
	fileio_regular_only(false);
	/* stop a run before the terminal comes back, so nothing is left behind */
	run_release(&a->run);
	screen_release(&s);
	no_alt_screen_clear();
	restore_terminal();
	delscreen(scr);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
	if (rc == 0 && a->autosaved && app_modified(a))
		fprintf(stderr, "octopipe: unsaved edits are in %s\n", a->as.path);
	return rc;
}

/* Ctrl-C while the layout search runs (before the first frame): its best layout so far. */
static volatile sig_atomic_t search_stop;

static void on_search_int(int sig)
{
	(void)sig;
	search_stop = 1;
}

/* app_init, with a --model/--cluster start's layout search interruptible by Ctrl-C and
 * announced on a terminal (it takes about a second on 64 gpus, more on big inputs). */
static int open_app(struct app *a, const struct tui_opts *o, struct err *e)
{
	struct app_open ao = { o->plan, o->model, o->cluster, o->microbatches, o->steps, o->launcher, o->time_scale,
	                       o->run_iters, o->backend, o->share_gpus, o->render != NULL, NULL, o->target };
	struct start_layout lo;
	struct sigaction sa, old;
	struct app_sample ds;
	bool search, say;
	int r;

	app_default_sample(o->target, &ds);
	search = o->model || (!o->plan && ds.search);
	say = !o->render && search && !(o->layout && o->layout->pp_only) && isatty(STDERR_FILENO);
	if (search) {
		if (o->layout)
			lo = *o->layout;
		else
			start_layout_init(&lo);
		search_stop = 0;
		lo.stop = &search_stop;
		ao.layout = &lo;
	}
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_search_int;
	if (search)
		sigaction(SIGINT, &sa, &old);
	if (say)
		fprintf(stderr, "octopipe: choosing the parallel layout (Ctrl-C takes the best judged so far)...");
	r = app_init(a, &ao, e);
	if (say)
		fprintf(stderr, "\r\033[K");
	if (search)
		sigaction(SIGINT, &old, NULL);
	return r;
}

int tui_run(const struct tui_opts *o, FILE *out, struct err *e)
{
	struct app a;
	int rc;

	if (open_app(&a, o, e) < 0)
		return -1;
	rc = o->render ? render(&a, o, out, e) : loop(&a, o, e);
	app_release(&a);
	return rc;
}
