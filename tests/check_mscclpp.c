/* MSCCL++ execution-plan vocabulary (include/tacos/mscclpp.h).
 * Oracle: the operation names of microsoft/mscclpp 1f5f065d's plan loader (getOpType in
 * src/core/executor/execution_plan.cc), listed here in that function's order, independently of the
 * table in src/emit/mscclpp_ops.c (which follows the OperationType enum order). */
#include "testutil.h"

#include <string.h>

#include "tacos/mscclpp.h"

static const char *const loader_names[] = {
  "nop", "barrier", "put", "pws", "pwsf", "get", "copy", "signal", "wait", "flush",
  "re", "res", "rre", "rres", "ppkt", "rppkt", "respkt", "cpkt", "upkt", "repkt",
  "recpkt", "recspkt", "glres", "gstore", "gstorepkt", "rlxsignal", "rlxwait", "pipeline",
  "sem_acquire", "sem_release",
};

START_TEST(test_op_table_matches_loader)
{
    size_t n = sizeof loader_names / sizeof loader_names[0];
    ck_assert_uint_eq(tc_mscclpp_op_count(), n);
    for (size_t i = 0; i < n; i++) {
        const tc_mscclpp_op_info *op = tc_mscclpp_op_find(loader_names[i]);
        ck_assert_msg(op != NULL, "loader name %s missing", loader_names[i]);
        ck_assert_str_eq(op->name, loader_names[i]);
        /* packet forms and only they end in "pkt" */
        size_t len = strlen(op->name);
        ck_assert_int_eq(op->packets, len > 3 && strcmp(op->name + len - 3, "pkt") == 0);
    }
    /* every row is distinct */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            ck_assert_str_ne(tc_mscclpp_op_at(i)->name, tc_mscclpp_op_at(j)->name);
    ck_assert_ptr_null(tc_mscclpp_op_at(n));
}
END_TEST

START_TEST(test_op_kinds)
{
    ck_assert_int_eq(tc_mscclpp_op_find("re")->kind, TC_MSCCLPP_OP_REDUCE);
    ck_assert_int_eq(tc_mscclpp_op_find("rres")->kind, TC_MSCCLPP_OP_REDUCE);
    ck_assert_int_eq(tc_mscclpp_op_find("put")->kind, TC_MSCCLPP_OP_MOVE);
    ck_assert_int_eq(tc_mscclpp_op_find("copy")->remote, 0);
    ck_assert_int_eq(tc_mscclpp_op_find("wait")->kind, TC_MSCCLPP_OP_SYNC);
}
END_TEST

START_TEST(test_rejects_unknown)
{
    /* names the loader throws "Invalid operation type" on, including MSCCL XML step types */
    const char *bad[] = {"", "s", "r", "rcs", "PUT", "put ", "reduce", "send", NULL};
    for (int i = 0; bad[i]; i++) ck_assert_ptr_null(tc_mscclpp_op_find(bad[i]));
    ck_assert_ptr_null(tc_mscclpp_op_find(NULL));
    ck_assert_int_eq(tc_mscclpp_buffer_valid("i") + tc_mscclpp_buffer_valid("o") + tc_mscclpp_buffer_valid("s"), 3);
    ck_assert_int_eq(tc_mscclpp_buffer_valid("input"), 0);
    ck_assert_int_eq(tc_mscclpp_buffer_valid(NULL), 0);
    ck_assert_int_eq(tc_mscclpp_channel_valid("memory") + tc_mscclpp_channel_valid("port") +
                         tc_mscclpp_channel_valid("switch") + tc_mscclpp_channel_valid("none"), 4);
    /* the pre-0.6 names are not accepted by this version's loader */
    ck_assert_int_eq(tc_mscclpp_channel_valid("sm"), 0);
    ck_assert_int_eq(tc_mscclpp_channel_valid("proxy"), 0);
}
END_TEST

START_TEST(test_limits)
{
    ck_assert_int_eq(TC_MSCCLPP_MAX_CHANNEL, 16);
    ck_assert_int_eq(TC_MSCCLPP_MAX_CHANNEL_PER_OPERATION, 8);
    ck_assert_int_eq(TC_MSCCLPP_MAX_OPERATION, 64);
    ck_assert_int_le(TC_MSCCLPP_MAX_CHANNEL_PER_OPERATION, TC_MSCCLPP_MAX_CHANNEL);
}
END_TEST

static Suite *mscclpp_suite(void)
{
    Suite *s = suite_create("mscclpp");
    TCase *tc = tcase_create("vocabulary");
    tcase_add_test(tc, test_op_table_matches_loader);
    tcase_add_test(tc, test_op_kinds);
    tcase_add_test(tc, test_rejects_unknown);
    tcase_add_test(tc, test_limits);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(mscclpp_suite)
