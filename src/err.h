/*
 * err — how the engine reports failure. Library functions return -1 (or NULL) and fill a
 * caller-provided struct err with one line of text and a class; only main() decides what
 * to print and which exit code to use. Messages are lowercase, without a final period,
 * and name the file and JSON path first: "plans/x.json: stages[3].device: no such device".
 */
#ifndef OCTO_ERR_H
#define OCTO_ERR_H

enum err_class {
	ERR_NONE = 0,
	ERR_RUNTIME = 1,    /* I/O failure, out of host memory, a worker died: exit 1 */
	ERR_INPUT = 2,      /* bad usage or a bad input file: exit 2 */
	ERR_INFEASIBLE = 3, /* deadlock or out of device memory: exit 3 */
};

struct err {
	enum err_class cls;
	char msg[1024];
};

#define ERR_INIT { ERR_NONE, "" }

/* Sets the message (printf-style) and class; always returns -1 so callers can `return err_set(...)`. */
int err_set(struct err *e, enum err_class cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepends "prefix: " to an existing message (used to add a file name one level up). */
void err_prefix(struct err *e, const char *prefix);
void err_clear(struct err *e);

#endif
