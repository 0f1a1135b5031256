/* test_cluster — clusters load, pick the right link between two devices, carry per-device
 * speeds and headroom, and round-trip exactly with unknown fields kept. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "../tap.h"

int main(void)
{
	struct err e = ERR_INIT;
	struct cluster c, d;
	char tmp[] = "/tmp/octopipe-cluster-XXXXXX", path[128];

	ok(cluster_load(&c, tap_data("tiny-cluster-2node.json"), &e) == 0, "a two-node cluster loads (%s)", e.msg);
	is_int(c.devices, 4, "4 devices");
	is_int(cluster_nodes(&c), 2, "in 2 nodes");
	is_int(cluster_node_of(&c, 3), 1, "device 3 is on node 1");
	ok(cluster_link(&c, 0, 1) == &c.intra, "devices 0 and 1 talk over NVLink");
	ok(cluster_link(&c, 1, 2) == &c.inter, "devices 1 and 2 talk over the network");
	is_dbl(cluster_link(&c, 1, 2)->gbytes_per_s, 50, 0, "inter-node bandwidth");
	is_dbl(c.device_speed[2], 0.5, 0, "per-device speed override");
	is_dbl(cluster_usable_bytes(&c), 76e9, 1, "usable memory subtracts the headroom");
	ok(c.gpu == NULL, "gpu is optional");
	ok(c.extra && cJSON_GetObjectItem(c.extra, "_site"), "comments are kept");

	ok(mkdtemp(tmp) != NULL, "temporary directory");
	snprintf(path, sizeof(path), "%s/c.json", tmp);
	ok(cluster_save(&c, path, &e) == 0, "cluster_save writes");
	ok(cluster_load(&d, path, &e) == 0, "the saved cluster loads (%s)", e.msg);
	ok(d.devices == c.devices && d.gpus_per_node == c.gpus_per_node && d.mem_bytes == c.mem_bytes &&
	   d.mem_headroom == c.mem_headroom && d.inter.latency_us == c.inter.latency_us &&
	   memcmp(d.device_speed, c.device_speed, 4 * sizeof(double)) == 0 && strcmp(d.name, c.name) == 0,
	   "save then load gives the same cluster");
	ok(d.extra && cJSON_GetObjectItem(d.extra, "_site"), "comments survive the round trip");
	{
		/* also inside the links: cost --calibrate rewrites the cluster file it read */
		cJSON *root = cluster_to_json(&d), *intra, *inter;

		intra = cJSON_GetObjectItem(root, "intra_node");
		inter = cJSON_GetObjectItem(root, "inter_node");
		ok(cJSON_IsString(cJSON_GetObjectItem(intra, "_fabric")), "a comment of intra_node survives");
		ok(cJSON_GetObjectItem(cJSON_GetObjectItem(inter, "_nic"), "ports") != NULL,
		   "and one of inter_node, whole");
		cJSON_Delete(root);
	}
	cluster_release(&d);
	unlink(path);
	rmdir(tmp);
	cluster_release(&c);

	{
		/* comments of the hardware section survive a rewrite too (cost --calibrate
		 * rewrites the cluster it read) */
		cJSON *in = cJSON_Parse("{\"format\":\"octopipe.cluster/1\",\"name\":\"h\",\"devices\":2,\"gpus_per_node\":2,\"mem_bytes\":1e9,"
		                        "\"intra_node\":{\"gbytes_per_s\":100,\"latency_us\":1},"
		                        "\"hardware\":{\"peak_tflops\":900,\"_measured_on\":{\"driver\":\"580\"}}}");
		cJSON *out, *hw;

		ok(in && cluster_from_json(&d, in, "h.json", NULL, &e) == 0, "a cluster with a hardware note loads: %s", e.msg);
		out = cluster_to_json(&d);
		hw = cJSON_GetObjectItem(out, "hardware");
		ok(cJSON_IsString(cJSON_GetObjectItem(cJSON_GetObjectItem(hw, "_measured_on"), "driver")),
		   "a comment of hardware survives, whole");
		is_dbl(cJSON_GetNumberValue(cJSON_GetObjectItem(hw, "peak_tflops")), 900, 0, "beside the known ones");
		cJSON_Delete(out);
		cJSON_Delete(in);
		cluster_release(&d);
	}
	ok(cluster_load(&c, tap_data("tiny-cluster.json"), &e) == 0, "a one-node cluster loads");
	ok(c.inter.gbytes_per_s == 0 && cluster_nodes(&c) == 1, "a single node needs no inter-node link");
	is_str(c.gpu, "H200", "gpu name");
	cluster_release(&c);
	return tap_done();
}
