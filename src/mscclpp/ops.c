/* MSCCL++ execution-plan vocabulary (the table of include/tacos/mscclpp.h): the operation, buffer and channel names the executor's plan
 * loader accepts (microsoft/mscclpp 1f5f065d, src/core/executor/execution_plan.cc getOpType,
 * convertToBufferType, convertToChannelType; the enum order of OperationType in
 * src/core/include/execution_common.hpp). Names only; see include/tacos/mscclpp.h. */
#include "tacos/mscclpp.h"

#include <string.h>

static const tc_mscclpp_op_info ops[] = {
  {"nop", TC_MSCCLPP_OP_SYNC, 0, 0, "no operation"},
  {"barrier", TC_MSCCLPP_OP_SYNC, 0, 0, "barrier among thread blocks of a GPU"},
  {"put", TC_MSCCLPP_OP_MOVE, 0, 1, "write local data to a peer"},
  {"ppkt", TC_MSCCLPP_OP_MOVE, 1, 1, "put as LL packets"},
  {"rppkt", TC_MSCCLPP_OP_MOVE, 1, 1, "read local packets, put them to a peer"},
  {"pws", TC_MSCCLPP_OP_MOVE, 0, 1, "put with signal"},
  {"pwsf", TC_MSCCLPP_OP_MOVE, 0, 1, "put with signal and flush"},
  {"get", TC_MSCCLPP_OP_MOVE, 0, 1, "read a peer's data"},
  {"copy", TC_MSCCLPP_OP_MOVE, 0, 0, "local copy"},
  {"cpkt", TC_MSCCLPP_OP_MOVE, 1, 0, "local copy into packets"},
  {"upkt", TC_MSCCLPP_OP_MOVE, 1, 0, "unpack packets"},
  {"signal", TC_MSCCLPP_OP_SYNC, 0, 1, "signal a peer"},
  {"wait", TC_MSCCLPP_OP_SYNC, 0, 1, "wait for a peer's signal"},
  {"flush", TC_MSCCLPP_OP_SYNC, 0, 1, "flush a port channel"},
  {"re", TC_MSCCLPP_OP_REDUCE, 0, 0, "reduce"},
  {"repkt", TC_MSCCLPP_OP_REDUCE, 1, 0, "reduce packets"},
  {"recpkt", TC_MSCCLPP_OP_REDUCE, 1, 0, "reduce and copy packets"},
  {"res", TC_MSCCLPP_OP_REDUCE, 0, 1, "reduce and send"},
  {"respkt", TC_MSCCLPP_OP_REDUCE, 1, 1, "reduce and send packets"},
  {"recspkt", TC_MSCCLPP_OP_REDUCE, 1, 1, "reduce, copy and send packets"},
  {"rre", TC_MSCCLPP_OP_REDUCE, 0, 1, "read peers' data and reduce"},
  {"rres", TC_MSCCLPP_OP_REDUCE, 0, 1, "read, reduce and send"},
  {"glres", TC_MSCCLPP_OP_REDUCE, 0, 1, "multimem load-reduce-store (switch channel)"},
  {"rlxsignal", TC_MSCCLPP_OP_SYNC, 0, 1, "relaxed signal"},
  {"rlxwait", TC_MSCCLPP_OP_SYNC, 0, 1, "relaxed wait"},
  {"pipeline", TC_MSCCLPP_OP_SYNC, 0, 0, "pipelined group of operations"},
  {"sem_release", TC_MSCCLPP_OP_SYNC, 0, 0, "device semaphore release"},
  {"sem_acquire", TC_MSCCLPP_OP_SYNC, 0, 0, "device semaphore acquire"},
  {"gstore", TC_MSCCLPP_OP_MOVE, 0, 1, "multimem store (switch channel)"},
  {"gstorepkt", TC_MSCCLPP_OP_MOVE, 1, 1, "multimem store of packets (switch channel)"},
};

size_t tc_mscclpp_op_count(void) { return sizeof ops / sizeof ops[0]; }

const tc_mscclpp_op_info *tc_mscclpp_op_at(size_t i) {
  return i < tc_mscclpp_op_count() ? &ops[i] : NULL;
}

const tc_mscclpp_op_info *tc_mscclpp_op_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < tc_mscclpp_op_count(); i++)
    if (strcmp(ops[i].name, name) == 0) return &ops[i];
  return NULL;
}

int tc_mscclpp_buffer_valid(const char *s) {
  return s && (strcmp(s, "i") == 0 || strcmp(s, "o") == 0 || strcmp(s, "s") == 0);
}

int tc_mscclpp_channel_valid(const char *s) {
  return s && (strcmp(s, "memory") == 0 || strcmp(s, "port") == 0 || strcmp(s, "switch") == 0 ||
               strcmp(s, "none") == 0);
}

static const char *const ch_names[] = {"memory", "port", "switch", "none"};

const char *tc_mscclpp_ch_name(int t) { return t >= 0 && t < 4 ? ch_names[t] : "?"; }

int tc_mscclpp_ch_parse(const char *s)
{
    for (int i = 0; s && i < 4; i++)
        if (strcmp(s, ch_names[i]) == 0)
            return i;
    return -1;
}

int tc_mscclpp_buf_parse(const char *s)
{
    static const char *const b[] = {"i", "o", "s"};
    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, b[i]) == 0)
            return i;
    return -1;
}
