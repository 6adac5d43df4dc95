/* Fuzz harness: the photonic fabric and circuit router (issue 22's overflow lived here).  The input is a
 * topology; one with a <photonic> element of at most 256 NPUs gets its fabric built (tc_photonic_fabric_create)
 * and up to 128 circuits within its tx/rx limits, drawn from a seed hashed from the input, routed through
 * its fibers and MZI meshes (tc_photonic_route, a short ILP time limit).  Every routed circuit must join its
 * own NPUs' servers, use a wavelength the fabric has, and have one fiber index per server hop. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "tacos/photonic.h"
#include "tacos/topo.h"

int tc_fuzz_photonic(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    tc_topo *t = NULL;
    tc_ph_fabric *fab = NULL;
    tc_ph_routes *rt = NULL;
    tc_ph_route_summary sum = {0};
    int *src = NULL, *dst = NULL, *out_n = NULL, *in_n = NULL;
    if (FUZZ_STATUS(tc_topo_read_mem(&ctx, "fuzz.xml", (const char *)data, size, &t), size) != TC_OK ||
        !t->photonic.present || t->n_npus < 2 || t->n_npus > 256)
        goto done;
    if (FUZZ_STATUS(tc_photonic_fabric_create(&ctx, t, &fab), size) != TC_OK)
        goto done;
    FUZZ_ASSERT(fab->n_npus == t->n_npus && fab->servers == fab->grid_rows * fab->grid_cols &&
                    fab->wavelengths >= 1,
                "an inconsistent fabric");
    for (int i = 0; i < fab->n_npus; i++)
        FUZZ_ASSERT(fab->server_of[i] >= 0 && fab->server_of[i] < fab->servers, "an NPU on no server");
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 0x100000001b3ull;
    tc_rng rng;
    tc_rng_seed(&rng, h);
    const int want = 1 + (int)tc_rng_below(&rng, 128), N = fab->n_npus;
    src = malloc((size_t)want * sizeof *src);
    dst = malloc((size_t)want * sizeof *dst);
    out_n = calloc((size_t)N, sizeof *out_n);
    in_n = calloc((size_t)N, sizeof *in_n);
    FUZZ_ASSERT(src && dst && out_n && in_n, "out of memory");
    int n = 0;
    for (int tries = 0; n < want && tries < 4 * want; tries++) { /* within the tx/rx limits, as route --random */
        const int a = (int)tc_rng_below(&rng, (uint64_t)N), b = (int)tc_rng_below(&rng, (uint64_t)N);
        if (a == b || (fab->tx && out_n[a] >= fab->tx) || (fab->rx && in_n[b] >= fab->rx))
            continue;
        out_n[a]++, in_n[b]++;
        src[n] = a, dst[n] = b, n++;
    }
    if (n == 0 || FUZZ_STATUS(tc_photonic_route(&ctx, fab, src, dst, n, 0.05, "fuzz", &rt, &sum), size) != TC_OK)
        goto done;
    FUZZ_ASSERT(rt->n_circuits == n, "a circuit was dropped");
    for (int i = 0; i < rt->n_circuits; i++) {
        const tc_ph_circuit *c = &rt->circuits[i];
        FUZZ_ASSERT(c->n_srv >= 1 && c->srv_off >= 0 && c->srv_off + c->n_srv <= rt->n_ints, "servers out of range");
        FUZZ_ASSERT(rt->ints[c->srv_off] == fab->server_of[c->src] &&
                        rt->ints[c->srv_off + c->n_srv - 1] == fab->server_of[c->dst],
                    "a circuit does not join its NPUs' servers");
        FUZZ_ASSERT(c->wavelength >= -1 && c->wavelength < fab->wavelengths, "a wavelength the fabric lacks");
    }
done:
    tc_photonic_route_summary_free(&sum);
    tc_photonic_routes_free(rt);
    tc_photonic_fabric_free(fab);
    tc_topo_free(t);
    free(src), free(dst), free(out_n), free(in_n);
    tc_buf_free(&diag);
    return 0;
}
