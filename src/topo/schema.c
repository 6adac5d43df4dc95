/* The topology schema (src/topo/topology.xsd) embedded into the library, so no install path is needed.
 * The assembler includes the file at build time; make runs from the repository root. */
#include "topo_internal.h"

__asm__(".section .rodata\n"
        ".global tc_topo_xsd_start\n"
        ".type tc_topo_xsd_start, @object\n"
        ".balign 16\n"
        "tc_topo_xsd_start:\n"
        ".incbin \"src/topo/topology.xsd\"\n"
        ".global tc_topo_xsd_end\n"
        ".type tc_topo_xsd_end, @object\n"
        "tc_topo_xsd_end:\n"
        ".byte 0\n"
        ".previous\n");

extern const char tc_topo_xsd_start[];
extern const char tc_topo_xsd_end[];

const char *tc_topo_schema_text(size_t *len)
{
    *len = (size_t)(tc_topo_xsd_end - tc_topo_xsd_start);
    return tc_topo_xsd_start;
}
