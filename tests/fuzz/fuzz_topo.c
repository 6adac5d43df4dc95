/* Fuzz harness: topology XML reader (tc_topo_read_mem), costs, switch unwinding, writer round trip. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "tacos/topo.h"

#include <string.h>

int tc_fuzz_topo(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    tc_topo *t = NULL, *u = NULL, *back = NULL;
    char *text = NULL;
    size_t len = 0;
    if (FUZZ_STATUS(tc_topo_read_mem(&ctx, "fuzz.xml", (const char *)data, size, &t), size) != TC_OK)
        goto done;
    if (FUZZ_STATUS(tc_topo_apply_costs(&ctx, t, NULL), size) != TC_OK)
        goto done;
    /* what every subcommand does next; metrics on small topologies only (exact diameters are quadratic) */
    if (FUZZ_STATUS(tc_topo_unwind(&ctx, t, 0, &u), size) == TC_OK && u->n_npus <= 512) {
        tc_topo_info info;
        tc_topo_info_get(&ctx, u, &info);
    }
    /* a topology that reads must write, and read back the same */
    FILE *f = open_memstream(&text, &len);
    FUZZ_ASSERT(f, "open_memstream");
    FUZZ_ASSERT(tc_topo_write(&ctx, t, f) == TC_OK, "a topology that was read cannot be written");
    fclose(f);
    FUZZ_ASSERT(tc_topo_read_mem(&ctx, "back.xml", text, len, &back) == TC_OK, "a written topology does not read back");
    FUZZ_ASSERT(back->n_npus == t->n_npus && back->n_links == t->n_links && back->n_switches == t->n_switches,
                "a written topology reads back different");
done:
    tc_topo_free(back);
    tc_topo_free(u);
    tc_topo_free(t);
    free(text);
    tc_buf_free(&diag);
    return 0;
}
