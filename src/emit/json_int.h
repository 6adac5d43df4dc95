/* Internal to the JSON schedule format (src/emit/json_write.c, json_read.c): what writer and reader share. */
#ifndef TACOS_EMIT_JSON_INT_H
#define TACOS_EMIT_JSON_INT_H

/* uint64 fields are JSON integers up to 2^53, decimal strings above */
#define TWO53 9007199254740992.0

#endif
