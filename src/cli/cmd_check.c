/*
 * octopipe check FILE... — validate any OctoPipe files and describe each in one line.
 * Every file is checked even after a failure, so one run reports all the broken files.
 */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "doc.h"
#include "json.h"

static void usage(FILE *f)
{
	fputs("usage: octopipe check [--json] [--quiet] [--structure-only] FILE...\n"
	      "\n"
	      "Validates model, cluster, plan, timeline, architecture, runtime and published-\n"
	      "points files (the kind is read from each file's \"format\"; a file without one\n"
	      "that names a model_type is a Hugging Face config.json, as `cost` reads it) and\n"
	      "prints one line per file; steps and rules files are checked by the commands\n"
	      "that read them. A plan is checked together with the model and cluster it\n"
	      "names, and simulated: a deadlocking order or a device out of memory gets the\n"
	      "line `octopipe sim` prints.\n"
	      "Invalid files get one line on stderr: FILE: JSON.PATH: problem.\n"
	      "\n"
	      "  --json            print a JSON array with one object per file\n"
	      "  --quiet           print nothing for valid files\n"
	      "  --structure-only  check a plan's structure without simulating it\n"
	      "\n"
	      "exit status: 0 all valid, 2 some file is invalid or unreadable, 3 some plan is\n"
	      "infeasible (and no file is invalid), 1 other failures\n", f);
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "structure-only", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, quiet = false, structure_only = false;
	int c, status = EXIT_OK;
	cJSON *out = NULL;

	optind = 0;
	while ((c = cli_getopt("check", argc, argv, "+jqh", opts)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'q': quiet = true; break;
		case 's': structure_only = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;
		}
	}
	if (optind >= argc)
		return cli_usage_error("check", "no files given");
	if (json && !(out = cJSON_CreateArray()))
		return EXIT_RUNTIME;
	for (int i = optind; i < argc; i++) {
		struct err e = ERR_INIT;
		struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
		struct doc d;
		int rc = EXIT_OK;

		if (doc_load(&d, argv[i], &e) < 0) {
			rc = cli_report(&e);
		} else if (d.kind == DOC_PLAN && !structure_only &&
		           (rc = cli_plan_verdict(argv[i], &d.u.plan, &why)) != EXIT_OK) {
			err_set(&e, rc == EXIT_INFEASIBLE ? ERR_INFEASIBLE : ERR_RUNTIME, "%s", why.buf);
			cli_report(&e);
			doc_release(&d);
		} else {
			doc_describe(&d, &sb);
			if (!json && !quiet)
				printf("%s: ok: %s\n", cli_name(argv[i]), sb.buf);
		}
		strbuf_release(&why);
		if (json) {
			struct jw w = { false };
			cJSON *o = jw_push(&w, out, cJSON_CreateObject());

			jw_str(&w, o, "file", argv[i]);
			jw_bool(&w, o, "ok", rc == EXIT_OK);
			if (rc == EXIT_OK) {
				jw_str(&w, o, "kind", doc_kind_name(d.kind));
				jw_str(&w, o, "summary", sb.buf);
			} else {
				jw_str(&w, o, "error", e.msg);
				if (rc == EXIT_INFEASIBLE)
					jw_bool(&w, o, "infeasible", true);
			}
		}
		if (rc == EXIT_OK)
			doc_release(&d);
		strbuf_release(&sb);
		/* the worst class wins: runtime failures (1) over bad input (2) over an
		 * infeasible plan (3) */
		if (rc != EXIT_OK && (status == EXIT_OK || rc == EXIT_RUNTIME ||
		                      (rc == EXIT_INPUT && status == EXIT_INFEASIBLE)))
			status = rc;
	}
	if (json) {
		int r = cli_put_json(out, false);

		if (r != EXIT_OK)
			status = r;
	}
	return status;
}
