/*
 * hardware — GPU peak, bandwidth and per-class efficiencies (see hardware.h).
 *
 * The section is small and flat on purpose: "efficiency" maps a class name to its
 * forward and backward fraction, so a person can read a calibration and edit it.
 */
#include "config.h"
#include "hardware.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"

const char *const hardware_class_names[EFF_NCLASS] = {
	"gemm", "grouped_gemm", "flash_attn", "eager_attn", "ssd", "scan", "memory",
};

/*
 * H200 SXM: 989 TFLOP/s dense BF16, 4.8 TB/s HBM3e (datasheet figures, docs/METHOD.md
 * §6.1). The launch overhead
 * is what the profiles that determine it agree on: deepseek-16b's per-expert loops (384
 * launches per MoE layer) fit 14.2 us alone and 14.3 us with nemotron-nano-v2-9b and
 * gpt-13b (whose large kernels alone cannot separate it from the GEMM efficiency); one
 * launch costs the same in both passes. The efficiencies are the least-squares fit of
 * `octopipe cost --calibrate --fix launch` over all four measured profiles together
 * (samples/README.md has the tables and the error per model and kind).
 */
static const double default_eff_f[EFF_NCLASS] = { 0.8343, 0.1244, 0.1368, 0.2199, 0.08858, 0.1, 0.2224 };
static const double default_eff_b[EFF_NCLASS] = { 0.8604, 0.3583, 0.173, 0.4198, 0.03254, 0.05, 0.4716 };
#define DEFAULT_LAUNCH_US_F 14.3
#define DEFAULT_LAUNCH_US_B 14.3

/* The sheets the bundled clusters quote (samples/clusters: SXM parts, dense BF16). */
static const struct {
	const char *gpu;
	double tflops, hbm_gbytes_per_s;
} datasheets[] = {
	{ "H200", 989.4, 4800 },
	{ "H100", 989.4, 3350 },
	{ "A100", 312, 2039 },
};

void hardware_default(struct hardware *hw)
{
	memset(hw, 0, sizeof(*hw));
	hw->peak_tflops = datasheets[0].tflops;  /* the H200's */
	hw->hbm_gbytes_per_s = datasheets[0].hbm_gbytes_per_s;
	memcpy(hw->eff_f, default_eff_f, sizeof(hw->eff_f));
	memcpy(hw->eff_b, default_eff_b, sizeof(hw->eff_b));
	hw->launch_us_f = DEFAULT_LAUNCH_US_F;
	hw->launch_us_b = DEFAULT_LAUNCH_US_B;
}

bool hardware_datasheet(const char *gpu, struct hardware *hw)
{
	for (size_t i = 0; gpu && i < sizeof(datasheets) / sizeof(datasheets[0]); i++)
		if (strcasecmp(gpu, datasheets[i].gpu) == 0) {
			hw->peak_tflops = datasheets[i].tflops;
			hw->hbm_gbytes_per_s = datasheets[i].hbm_gbytes_per_s;
			return true;
		}
	return false;
}

int hardware_class(const char *name)
{
	for (int c = 0; c < EFF_NCLASS; c++)
		if (strcmp(name, hardware_class_names[c]) == 0)
			return c;
	return -1;
}

void hardware_release(struct hardware *hw)
{
	if (!hw)
		return;
	free(hw->source);
	cJSON_Delete(hw->extra);
	memset(hw, 0, sizeof(*hw));
}

int hardware_from_json(struct hardware *hw, const cJSON *obj, const char *file, const char *prefix,
                       const char *path, struct err *e)
{
	static const char *const known[] = { "source", "peak_tflops", "hbm_gbytes_per_s", "efficiency", "launch_us",
	                                     "flash_dropout", NULL };
	static const char *const fb_keys[] = { "f", "b", NULL };
	static const char *const launch_keys[] = { "f", "b", "async", NULL };
	struct jv v = { file, e, prefix };
	const cJSON *effs, *launch, *drop;
	const char *source;
	char p[JPATH_MAX], q[JPATH_MAX];

	hardware_default(hw);
	if (!cJSON_IsObject(obj))
		return jv_fail(&v, path, "must be an object, not %s", json_type_name(obj));
	if (jv_keys(&v, obj, path, known) < 0 ||
	    jv_number(&v, obj, path, "peak_tflops", 0, 1e-3, 1e6, hw->peak_tflops, &hw->peak_tflops) < 0 ||
	    jv_number(&v, obj, path, "hbm_gbytes_per_s", 0, 1e-3, 1e9, hw->hbm_gbytes_per_s,
	              &hw->hbm_gbytes_per_s) < 0 ||
	    jv_string(&v, obj, path, "source", JV_NONEMPTY, NULL, &source) < 0 ||
	    jv_object(&v, obj, path, "efficiency", 0, &effs) < 0 ||
	    jv_object(&v, obj, path, "launch_us", 0, &launch) < 0 ||
	    jv_object(&v, obj, path, "flash_dropout", 0, &drop) < 0)
		return -1;
	if (drop) {
		jpath_key(p, path, "flash_dropout");
		if (jv_keys(&v, drop, p, fb_keys) < 0 ||
		    jv_number(&v, drop, p, "f", JV_REQUIRED, 1e-6, 1, 0, &hw->flash_dropout_f) < 0 ||
		    jv_number(&v, drop, p, "b", JV_REQUIRED, 1e-6, 1, 0, &hw->flash_dropout_b) < 0)
			return -1;
	}
	hw->eff_given = effs || launch;
	if (launch) {
		jpath_key(p, path, "launch_us");
		if (jv_keys(&v, launch, p, launch_keys) < 0 ||
		    jv_number(&v, launch, p, "f", JV_REQUIRED, 0, 1e6, 0, &hw->launch_us_f) < 0 ||
		    jv_number(&v, launch, p, "b", JV_REQUIRED, 0, 1e6, 0, &hw->launch_us_b) < 0 ||
		    jv_bool(&v, launch, p, "async", 0, false, &hw->launch_async) < 0)
			return -1;
	}
	jpath_key(p, path, "efficiency");
	for (const cJSON *c = effs ? effs->child : NULL; c; c = c->next) {
		int k = hardware_class(c->string);

		if (jv_is_comment_key(c->string))
			continue;
		jpath_key(q, p, c->string);
		if (k < 0) {
			struct strbuf sb = STRBUF_INIT;

			for (int i = 0; i < EFF_NCLASS; i++)
				strbuf_addf(&sb, "%s%s", i ? ", " : "", hardware_class_names[i]);
			jv_fail(&v, q, "not a kernel class (one of %s)", sb.buf);
			strbuf_release(&sb);
			return -1;
		}
		if (!cJSON_IsObject(c))
			return jv_fail(&v, q, "must be an object like {\"f\": 0.7, \"b\": 0.6}, not %s",
			               json_type_name(c));
		if (jv_keys(&v, c, q, fb_keys) < 0 ||
		    jv_number(&v, c, q, "f", JV_REQUIRED, 1e-6, 1, 0, &hw->eff_f[k]) < 0 ||
		    jv_number(&v, c, q, "b", JV_REQUIRED, 1e-6, 1, 0, &hw->eff_b[k]) < 0)
			return -1;
	}
	if ((source && !(hw->source = strdup(source))) || json_extras(obj, known, &hw->extra) < 0) {
		hardware_release(hw);
		return err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
	}
	return 0;
}

cJSON *hardware_to_json(const struct hardware *hw)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *effs;

	if (hw->source)
		jw_str(&w, root, "source", hw->source);
	jw_num(&w, root, "peak_tflops", hw->peak_tflops);
	jw_num(&w, root, "hbm_gbytes_per_s", hw->hbm_gbytes_per_s);
	/* a datasheet section stays one: efficiencies are written only where they were given
	 * (a calibration, or the table of a model priced with them) */
	if (hw->eff_given) {
		effs = jw_obj(&w, root, "efficiency");
		for (int c = 0; c < EFF_NCLASS; c++) {
			cJSON *o = jw_obj(&w, effs, hardware_class_names[c]);

			jw_num(&w, o, "f", hw->eff_f[c]);
			jw_num(&w, o, "b", hw->eff_b[c]);
		}
		effs = jw_obj(&w, root, "launch_us");
		jw_num(&w, effs, "f", hw->launch_us_f);
		jw_num(&w, effs, "b", hw->launch_us_b);
		if (hw->launch_async)
			jw_bool(&w, effs, "async", true);
		if (hw->flash_dropout_f > 0) {
			effs = jw_obj(&w, root, "flash_dropout");
			jw_num(&w, effs, "f", hw->flash_dropout_f);
			jw_num(&w, effs, "b", hw->flash_dropout_b);
		}
	}
	jw_extras(&w, root, hw->extra);
	if (w.oom || !root) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
