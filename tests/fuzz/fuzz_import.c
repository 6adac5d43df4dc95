/* Fuzz harness: topology import (tc_topo_import_mem: NCCL/RCCL dumps, nvidia-smi topo -m, rocm-smi text),
 * then what tacosc does with it: compose two servers when it has NICs, unwind, metrics, write. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "tacos/topo.h"

#include <string.h>

int tc_fuzz_import(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    tc_topo *t = NULL, *c = NULL, *u = NULL;
    char *text = NULL;
    size_t len = 0;
    const tc_import_opts o = {.nic_bw = 50e9};
    if (FUZZ_STATUS(tc_topo_import_mem(&ctx, "fuzz.txt", (const char *)data, size, &o, &t), size) != TC_OK)
        goto done;
    int nics = 0;
    for (int s = 0; s < t->n_switches; s++)
        nics += t->switches[s].nic;
    if (nics && t->n_npus <= 256)
        FUZZ_ASSERT(tc_topo_compose(&ctx, t, 2, "rail", 1, 0, &c) == TC_OK, "an imported server with nics does not compose");
    if (FUZZ_STATUS(tc_topo_unwind(&ctx, c ? c : t, 0, &u), size) == TC_OK && u->n_npus <= 256) {
        tc_topo_info info;
        tc_topo_info_get(&ctx, u, &info);
    }
    FILE *f = open_memstream(&text, &len);
    FUZZ_ASSERT(f, "open_memstream");
    FUZZ_ASSERT(tc_topo_write(&ctx, c ? c : t, f) == TC_OK, "an imported topology cannot be written");
    fclose(f);
done:
    tc_topo_free(u);
    tc_topo_free(c);
    tc_topo_free(t);
    free(text);
    tc_buf_free(&diag);
    return 0;
}
