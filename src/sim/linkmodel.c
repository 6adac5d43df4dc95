/*
 * The link models (issue 27): what one chunk costs on one link, for the simulator, the bounds and the TACOS
 * synthesizer alike.
 *
 * tacos (the default, the TACOS paper's model): a chunk holds the link for alpha + beta * bytes and is at the
 *   far end when it lets go; the next chunk starts then.
 * te-ccl (the model of TE-CCL's public solver, microsoft/TE-CCL at c128bf2):
 *   - a chunk holds the link beta * bytes (the capacity constraint: capacity_constraints() in
 *     teccl/solvers/allgather.py counts flows against capacity * epoch, nothing else);
 *   - it is at the far end alpha after it lets go (alpha is propagation delay, never holding the link:
 *     node_constraint_helper() adds flow[k - alpha_num_back - 1 - beta_num_back] to the buffer);
 *   - from a switch to a GPU it is at the GPU alpha after its send starts, beta not counted again
 *     ("switch second link is ignored to remove double accounting of transmission delay",
 *     switch_to_gpu_link_on = False in teccl/input_data.py);
 *   - alpha counts as 0 on a link where alpha / epoch <= alpha_threshold = 0.1 (get_alpha_num_back() in
 *     teccl/solvers/base_formulation.py), the epoch being the fastest link's time for one chunk
 *     (EpochType.FASTEST_LINK, Topology.get_epoch_duration_fast_link()).
 *   TE-CCL then rounds alpha and beta * bytes up to whole epochs and grows the epoch when the smallest
 *   alpha passes 200 epochs; tacosc keeps continuous time and does neither (its times are at most
 *   TE-CCL's for the same plan).  TE-CCL's switches copy (switch_copy = True): tacosc compile gives every
 *   switch the model multicast under te-ccl unless --switch-model says otherwise (cmd_compile.c).
 * Trace, te-ccl, NPU 0 -> switch 2 -> NPU 1, alpha 1 us, beta * bytes 2 us per link, two chunks: chunk a
 *   holds 0->2 over [0, 2), is at the switch at 3 and at NPU 1 at 4 (2->1 held over [3, 5)); chunk b holds
 *   0->2 over [2, 4), is at the switch at 5, holds 2->1 over [5, 7), is at NPU 1 at 6.  tacos: 3, 6; 6, 9.
 */
#include "tacos/sim.h"
#include "tacos/topo.h"

double tc_link_epoch(const tc_topo *t, double bytes)
{
    double e = 0;
    for (int l = 0; l < t->n_links; l++) {
        const double c = tc_link_beta_at(t, &t->links[l], bytes) * bytes;
        if (c > 0 && (e == 0 || c < e))
            e = c;
    }
    return e;
}

void tc_link_times(const tc_topo *t, int l, double bytes, double epoch, double *hold, double *lat)
{
    const tc_link *k = &t->links[l];
    if (t->link_model != TC_LINK_TECCL) {
        *hold = *lat = tc_link_cost(t, k, bytes);
        return;
    }
    const double a = k->alpha > 0.1 * epoch ? k->alpha : 0; /* TE-CCL's alpha_threshold */
    *hold = tc_link_beta_at(t, k, bytes) * bytes;
    *lat = k->src >= t->n_npus && k->dst < t->n_npus ? a : *hold + a; /* switch to NPU: no second beta */
}
