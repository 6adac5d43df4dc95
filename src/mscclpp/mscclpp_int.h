/* Internal to src/mscclpp/: what the lowering, writer, reader and verifier share. */
#ifndef TACOS_MSCCLPP_INT_H
#define TACOS_MSCCLPP_INT_H

#include "tacos/msccl.h"
#include "tacos/mscclpp.h"

tc_status mpp_create(const char *name, const char *coll, int ngpus, tc_mscclpp **out);
tc_status mpp_tb_add(tc_mscclpp_gpu *g, tc_mscclpp_tb **out);
tc_status mpp_op_add(tc_mscclpp_tb *tb, const tc_mscclpp_op *op);
/** Zero an op and set its name (a row of the table), chan_type -1, barrier -1, tbg 0 of 1. */
void mpp_op_init(tc_mscclpp_op *op, const char *name);
const char *mpp_op_name(const tc_mscclpp_op *op);
tc_status mpp_chan_add(tc_mscclpp_gpu *g, int type, int peer, int buf, int line);
tc_status mpp_rbuf_add(tc_mscclpp_gpu *g, int rank, int type, int access, int line);
tc_status mpp_int_push(int **a, int *n, int v);

/** The thread-sync rule (plan.c): 1 when operation b may not follow a in a thread block without a nop. */
int mpp_need_nop(const tc_mscclpp_op *a, const tc_mscclpp_op *b);

#endif
