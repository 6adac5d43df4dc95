/* Helpers shared by the files of src/topo/ (not part of the public API). */
#ifndef TACOS_TOPO_INTERNAL_H
#define TACOS_TOPO_INTERNAL_H

#include "tacos/topo.h"

/* Parse a time ("0.5us") or bandwidth ("50GB/s"); on failure write a reason into why (may be NULL).
 * Sign is not checked: callers report negative or zero values with their own context. */
tc_status tc_topo_parse_time_why(const char *s, double *out, char *why, size_t n);
tc_status tc_topo_parse_bw_why(const char *s, double *out, char *why, size_t n);
/* Shortest text that the parsers above read back as exactly `v` ("0.5us", "50GB/s"); buf >= 48. */
const char *tc_topo_fmt_time(double seconds, char *buf, size_t n);
/* A bandwidth text whose reciprocal, as the reader computes it, is exactly beta (s/B). */
const char *tc_topo_fmt_beta(double beta, char *buf, size_t n);
/* The embedded XML schema (src/topo/topology.xsd). */
const char *tc_topo_schema_text(size_t *len);

/* The name of an imported topology: the input file's base name without extension (import-NgpU when it
 * is no name). */
void tc_topo_import_name(const char *file, int n_gpu, char *buf, size_t len);

#endif
