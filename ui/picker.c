/*
 * picker — the list F7 offers, its filter and its selection (see picker.h).
 *
 * The entries are built once when the picker opens; typing only recomputes which of them
 * show (every word of the filter in the entry's name or file, any case), so the list
 * narrows at once even with a hundred samples. The selection follows the entry it was on
 * while the filter keeps it, else goes to the first one shown.
 */
#include "config.h"
#include "picker.h"

#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "fileio.h"
#include "strbuf.h"

#define CTRL(c) ((c) & 0x1f)

struct names {
	char **v;
	int n;
};

/* Numbers in names in their order: 4xH200 before 16xH200. */
static int cmp_str(const void *x, const void *y)
{
	return strverscmp(*(char *const *)x, *(char *const *)y);
}

/* The NAME of every dir/NAME.json, sorted. */
static int list_json(const char *dir, struct names *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int cap = 0;

	out->v = NULL;
	out->n = 0;
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t nl = strlen(de->d_name);

		if (nl <= 5 || de->d_name[0] == '.' || strcmp(de->d_name + nl - 5, ".json") != 0)
			continue;
		if (out->n == cap) {
			char **v = realloc(out->v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!v)
				goto oom;
			out->v = v;
		}
		if (!(out->v[out->n] = strndup(de->d_name, nl - 5)))
			goto oom;
		out->n++;
	}
	closedir(d);
	if (out->n > 1)
		qsort(out->v, (size_t)out->n, sizeof(*out->v), cmp_str);
	return 0;
oom:
	closedir(d);
	return -1;
}

static void names_release(struct names *nm)
{
	for (int i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
	nm->v = NULL;
	nm->n = 0;
}

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *dupf(const char *fmt, ...)
{
	char buf[PATH_MAX * 2 + 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return strdup(buf);
}

static int add(struct picker *pk, int *cap, enum pick_kind kind, char *name, char *where, char *path, char *model,
               char *cluster)
{
	struct pick_entry *e;

	if (pk->n == *cap) {
		struct pick_entry *v = realloc(pk->e, (size_t)(*cap = *cap ? 2 * *cap : 64) * sizeof(*v));

		if (!v)
			goto oom;
		pk->e = v;
	}
	if (!name || !where || (kind != PICK_SAMPLE && !path) || (kind == PICK_SAMPLE && (!model || !cluster)))
		goto oom;
	e = &pk->e[pk->n++];
	e->kind = kind;
	e->name = name;
	e->where = where;
	e->path = path;
	e->model = model;
	e->cluster = cluster;
	return 0;
oom:
	free(name);
	free(where);
	free(path);
	free(model);
	free(cluster);
	return -1;
}

/* Does the entry hold every blank-separated word of f (any case)? */
static bool keeps(const struct pick_entry *e, const char *f)
{
	char word[LINE_MAX_LEN + 1];

	while (*f) {
		size_t n;

		while (*f == ' ')
			f++;
		n = strcspn(f, " ");
		if (n == 0)
			break;
		snprintf(word, sizeof(word), "%.*s", (int)n, f);
		if (!strcasestr(e->name, word) && !strcasestr(e->where, word))
			return false;
		f += n;
	}
	return true;
}

static void refilter(struct picker *pk)
{
	int was = pk->sel >= 0 && pk->sel < pk->nshown ? pk->shown[pk->sel] : -1;

	pk->nshown = 0;
	pk->sel = -1;
	for (int i = 0; i < pk->n; i++)
		if (keeps(&pk->e[i], pk->filter.buf)) {
			if (i == was)
				pk->sel = pk->nshown;
			pk->shown[pk->nshown++] = i;
		}
	if (pk->sel < 0 && pk->nshown > 0)
		pk->sel = 0;
	picker_scroll(pk);
}

int picker_open(struct picker *pk, const char *dd, char *const *recent, int nrecent)
{
	struct names plans = { NULL, 0 }, models = { NULL, 0 }, clusters = { NULL, 0 };
	char dir[PATH_MAX];
	int cap = 0, rc = 0;

	memset(pk, 0, sizeof(*pk));
	pk->sel = -1;
	pk->page = 10;
	for (int i = 0; i < nrecent && rc == 0; i++) {
		const char *b = strrchr(recent[i], '/');

		if (access(recent[i], R_OK) == 0)
			rc = add(pk, &cap, PICK_RECENT, strdup(b ? b + 1 : recent[i]), strdup(recent[i]), strdup(recent[i]),
			         NULL, NULL);
	}
	if (dd && rc == 0) {
		snprintf(dir, sizeof(dir), "%s/plans", dd);
		rc |= list_json(dir, &plans);
		snprintf(dir, sizeof(dir), "%s/samples/models", dd);
		rc |= list_json(dir, &models);
		snprintf(dir, sizeof(dir), "%s/samples/clusters", dd);
		rc |= list_json(dir, &clusters);
		for (int i = 0; i < plans.n && rc == 0; i++)
			rc = add(pk, &cap, PICK_PLAN, strdup(plans.v[i]), dupf("plans/%s.json", plans.v[i]),
			         dupf("%s/plans/%s.json", dd, plans.v[i]), NULL, NULL);
		for (int m = 0; m < models.n && rc == 0; m++)
			for (int c = 0; c < clusters.n && rc == 0; c++)
				rc = add(pk, &cap, PICK_SAMPLE, dupf("%s on %s", models.v[m], clusters.v[c]),
				         dupf("samples/models/%s.json, samples/clusters/%s.json", models.v[m], clusters.v[c]),
				         NULL, dupf("%s/samples/models/%s.json", dd, models.v[m]),
				         dupf("%s/samples/clusters/%s.json", dd, clusters.v[c]));
	}
	names_release(&plans);
	names_release(&models);
	names_release(&clusters);
	if (rc == 0 && !(pk->shown = calloc((size_t)pk->n + 1, sizeof(*pk->shown))))
		rc = -1;
	if (rc != 0) {
		picker_release(pk);
		pk->sel = -1;
		return -1;
	}
	refilter(pk);
	return 0;
}

void picker_release(struct picker *pk)
{
	for (int i = 0; i < pk->n; i++) {
		free(pk->e[i].name);
		free(pk->e[i].where);
		free(pk->e[i].path);
		free(pk->e[i].model);
		free(pk->e[i].cluster);
	}
	free(pk->e);
	free(pk->shown);
	memset(pk, 0, sizeof(*pk));
	pk->sel = -1;
}

const struct pick_entry *picker_chosen(const struct picker *pk)
{
	return pk->sel >= 0 && pk->sel < pk->nshown ? &pk->e[pk->shown[pk->sel]] : NULL;
}

void picker_scroll(struct picker *pk)
{
	int page = pk->page > 0 ? pk->page : 1;

	if (pk->sel < pk->top)
		pk->top = pk->sel;
	if (pk->sel >= pk->top + page)
		pk->top = pk->sel - page + 1;
	if (pk->top > pk->nshown - page)
		pk->top = pk->nshown - page;
	if (pk->top < 0)
		pk->top = 0;
}

enum pick_result picker_key(struct picker *pk, int key)
{
	int page = pk->page > 1 ? pk->page - 1 : 1, sel = pk->sel;

	switch (key) {
	case 27: return PICK_CANCEL;
	case '\t': return PICK_TAB;
	case '\n': case '\r': case KEY_ENTER: return pk->nshown > 0 ? PICK_CHOSE : PICK_TYPED;
	case KEY_UP: case CTRL('p'): sel--; break;
	case KEY_DOWN: case CTRL('n'): sel++; break;
	case KEY_PPAGE: sel -= page; break;
	case KEY_NPAGE: sel += page; break;
	case KEY_HOME: sel = 0; break;
	case KEY_END: sel = pk->nshown - 1; break;
	default:
		/* everything else edits the filter (typing, Backspace, ^U, ^W, Left, Right) */
		if (line_key(&pk->filter, NULL, key))
			refilter(pk);
		return PICK_NOTHING;
	}
	if (pk->nshown == 0)
		return PICK_NOTHING;
	pk->sel = sel < 0 ? 0 : sel >= pk->nshown ? pk->nshown - 1 : sel;
	picker_scroll(pk);
	return PICK_NOTHING;
}

int picker_recent_read(const char *dir, char **out)
{
	char path[PATH_MAX], line[PATH_MAX + 2];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/recent", dir);
	if (!(f = fopen(path, "r")))
		return 0;
	while (n < PICKER_RECENT_MAX && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '/' && (out[n] = strdup(line)) != NULL)
			n++;
	}
	fclose(f);
	return n;
}

int picker_recent_add(const char *dir, const char *path)
{
	char file[PATH_MAX], *abs = realpath(path, NULL), *old[PICKER_RECENT_MAX];
	struct strbuf sb = STRBUF_INIT;
	struct err e = ERR_INIT;
	int n, k = 1, rc = 0;

	if (!abs)
		return -1;
	/* one path a line: a name with a line break would come back as two other files */
	if (strpbrk(abs, "\n\r")) {
		free(abs);
		return -1;
	}
	n = picker_recent_read(dir, old);
	snprintf(file, sizeof(file), "%s/recent", dir);
	strbuf_addf(&sb, "%s\n", abs);
	for (int i = 0; i < n && k < PICKER_RECENT_MAX; i++)
		if (strcmp(old[i], abs) != 0) {
			strbuf_addf(&sb, "%s\n", old[i]);
			k++;
		}
	/* a temporary file of its own renamed over the list: a crash leaves the old list or
	 * the new one, and two UIs saving at once never write into one temporary file */
	if (strbuf_failed(&sb) || fileio_write_atomic(file, sb.buf, sb.len, &e) < 0)
		rc = -1;
	strbuf_release(&sb);
	for (int i = 0; i < n; i++)
		free(old[i]);
	free(abs);
	return rc;
}
