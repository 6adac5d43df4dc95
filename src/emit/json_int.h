/* Internal to the JSON schedule format (src/emit/json_write.c, json_read.c): what writer and reader share. */
#ifndef TACOS_EMIT_JSON_INT_H
#define TACOS_EMIT_JSON_INT_H

/* uint64 fields are JSON integers up to 2^53, decimal strings above */
#define TWO53 9007199254740992.0

/* the photonic section's round kinds and routing methods, by their enum values */
static const char *const ph_kind_name[3] = {"initial", "fallback", "own"};
static const char *const ph_method_name[3] = {"none", "ilp", "lp-rounding"};

#endif
