/* Fuzz harness: cost file reader (tc_costs_read_mem), applied to a topology that uses its classes. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "tacos/topo.h"

int tc_fuzz_costs(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    tc_costs *c = NULL;
    tc_topo *t = NULL;
    if (FUZZ_STATUS(tc_costs_read_mem(&ctx, "fuzz.cost", (const char *)data, size, &c), size) != TC_OK)
        goto done;
    /* a bidirectional ring with one link per class the file defines (and the default class) */
    int n = c->n_classes + 2;
    if (tc_topo_create("fuzz", n, &t) != TC_OK)
        goto done;
    for (int i = 0; i < n; i++) {
        int cls = 0;
        if (i < c->n_classes && tc_topo_class_get(t, c->classes[i].name, &cls) != TC_OK)
            goto done;
        if (tc_topo_add_link(t, i, (i + 1) % n, cls, -1, -1, 0) || tc_topo_add_link(t, (i + 1) % n, i, cls, -1, -1, 0))
            goto done;
    }
    if (tc_topo_index(t) == TC_OK && tc_topo_apply_costs(&ctx, t, c) == TC_OK) {
        tc_topo_info info;
        FUZZ_ASSERT(tc_topo_info_get(&ctx, t, &info) == TC_OK, "metrics of a costed ring failed");
        for (int l = 0; l < t->n_links; l++)
            FUZZ_ASSERT(t->links[l].alpha >= 0 && t->links[l].alpha <= TC_TIME_MAX && t->links[l].beta > 0 &&
                            t->links[l].beta <= TC_TIME_MAX,
                        "a cost out of range was accepted");
    }
done:
    tc_topo_free(t);
    tc_costs_free(c);
    tc_buf_free(&diag);
    return 0;
}
