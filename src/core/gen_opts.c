/* Defaults of the generator options (tacos/algo.h), shared by the classic generators, the synthesizer
 * and the registry above them: in core so that neither generator folder calls into the other for them. */
#include "tacos/algo.h"

#include <string.h>

void tc_gen_opts_init(tc_gen_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = 1u << 20;
    o->chunks = 1;
    o->trials = 1;
    o->match = TC_MATCH_BEST;
}
