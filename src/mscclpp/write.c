/* The MSCCL++ plan as JSON, in the field names of the executor's plan loader (microsoft/mscclpp 1f5f065d,
 * src/core/executor/execution_plan.cc): deterministic, two-space indentation, one operation per line. */
#include "mscclpp_int.h"

#include <inttypes.h>
#include <string.h>

static void ints(FILE *f, const int *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fputc(']', f);
}

static void bufs(FILE *f, const char *key, const tc_mscclpp_buf *b, int n)
{
    fprintf(f, ", \"%s\": [", key);
    for (int i = 0; i < n; i++) {
        if (b[i].type == -2)
            fprintf(f, "%s{\"switch_channel_id\": %d, \"index\": %d, \"size\": %d}", i ? ", " : "", b[i].id,
                    b[i].index, b[i].size);
        else if (b[i].type >= 0)
            fprintf(f, "%s{\"type\": \"%s\", \"index\": %d, \"size\": %d}", i ? ", " : "", tc_msccl_buf_name(b[i].type),
                    b[i].index, b[i].size);
        else
            fprintf(f, "%s{\"buffer_id\": %d, \"index\": %d, \"size\": %d}", i ? ", " : "", b[i].id, b[i].index,
                    b[i].size);
    }
    fputc(']', f);
}

static void op(FILE *f, const tc_mscclpp_op *o, int last)
{
    const tc_mscclpp_op_info *info = tc_mscclpp_op_at((size_t)o->op);
    fprintf(f, "            {\"name\": \"%s\"", info->name);
    if (o->n_src)
        bufs(f, "src_buff", o->src, o->n_src);
    if (o->n_dst)
        bufs(f, "dst_buff", o->dst, o->n_dst);
    if (o->n_chan) {
        fputs(", \"channel_ids\": ", f);
        ints(f, o->chan, o->n_chan);
    }
    if (o->chan_type >= 0)
        fprintf(f, ", \"channel_type\": \"%s\"", tc_mscclpp_ch_name(o->chan_type));
    if (info->kind == TC_MSCCLPP_OP_REDUCE)
        fputs(", \"reduce_op\": \"sum\"", f);
    if (o->barrier_id >= 0)
        fprintf(f, ", \"barrier_id\": %d, \"num_threadblocks\": %d", o->barrier_id, o->n_tbs);
    if (o->n_sem) {
        fputs(", \"semaphore_ids\": ", f);
        ints(f, o->sem, o->n_sem);
    }
    if (o->tbg_size > 1)
        fprintf(f, ", \"tbg_info\": {\"tb_id\": %d, \"tbg_size\": %d}", o->tbg_id, o->tbg_size);
    fprintf(f, "}%s\n", last ? "" : ",");
}

static void tb_refs(FILE *f, const tc_mscclpp_tb *tb)
{
    int first = 1;
    fputs("          \"channels\": [", f);
    for (int t = 0; t < 3; t++) {
        if (!tb->n_ch[t])
            continue;
        fprintf(f, "%s{\"channel_type\": \"%s\", \"channel_ids\": ", first ? "" : ", ", tc_mscclpp_ch_name(t));
        ints(f, tb->ch[t], tb->n_ch[t]);
        fputc('}', f);
        first = 0;
    }
    fputs("],\n          \"remote_buffer_refs\": [", f);
    first = 1;
    for (int t = 0; t < 2; t++) {
        if (!tb->n_rb[t])
            continue;
        fprintf(f, "%s{\"access_channel_type\": \"%s\", \"remote_buffer_ids\": ", first ? "" : ", ",
                tc_mscclpp_ch_name(t));
        ints(f, tb->rb[t], tb->n_rb[t]);
        fputc('}', f);
        first = 0;
    }
    fputs("]\n", f);
}

static void gpu(FILE *f, const tc_mscclpp_gpu *g, int last)
{
    fprintf(f, "    {\n      \"id\": %d,\n      \"input_chunks\": %d,\n      \"output_chunks\": %d,\n"
               "      \"scratch_chunks\": %d,\n      \"channels\": [",
            g->id, g->i_chunks, g->o_chunks, g->s_chunks);
    int first = 1;
    for (int t = 0; t < 2; t++) { /* memory, port: one entry per type, its peers in channel order */
        int n = 0;
        for (int i = 0; i < g->n_chans; i++)
            n += g->chans[i].type == t;
        if (!n)
            continue;
        fprintf(f, "%s{\"channel_type\": \"%s\", \"connected_to\": [", first ? "" : ", ", tc_mscclpp_ch_name(t));
        for (int i = 0, k = 0; i < g->n_chans; i++)
            if (g->chans[i].type == t)
                fprintf(f, "%s%d", k++ ? ", " : "", g->chans[i].peer);
        fputs("]}", f);
        first = 0;
    }
    fputs("],\n      \"remote_buffers\": [", f);
    for (int i = 0; i < g->n_rbufs; i++) {
        fprintf(f, "%s{\"rank\": %d, \"type\": \"%s\", \"access_channel_types\": [", i ? ", " : "", g->rbufs[i].rank,
                tc_msccl_buf_name(g->rbufs[i].type));
        for (int t = 0, k = 0; t < 3; t++)
            if (g->rbufs[i].access & (1 << t))
                fprintf(f, "%s\"%s\"", k++ ? ", " : "", tc_mscclpp_ch_name(t));
        fputs("]}", f);
    }
    fputs("],\n      \"semaphores\": [", f);
    for (int i = 0; i < g->n_sems; i++)
        fprintf(f, "%s{\"init_value\": %d}", i ? ", " : "", g->sem_init[i]);
    fputs("],\n      \"threadblocks\": [\n", f);
    for (int t = 0; t < g->n_tbs; t++) {
        const tc_mscclpp_tb *tb = &g->tbs[t];
        fprintf(f, "        {\n          \"id\": %d,\n          \"ops\": [\n", tb->id);
        for (int k = 0; k < tb->n_ops; k++)
            op(f, &tb->ops[k], k == tb->n_ops - 1);
        fputs("          ],\n", f);
        tb_refs(f, tb);
        fprintf(f, "        }%s\n", t == g->n_tbs - 1 ? "" : ",");
    }
    fprintf(f, "      ]\n    }%s\n", last ? "" : ",");
}

tc_status tc_mscclpp_write(tc_ctx *ctx, const tc_mscclpp *p, FILE *f)
{
    fputs("{\n  \"name\": ", f);
    tc_json_escape(f, p->name);
    fputs(",\n  \"collective\": ", f);
    tc_json_escape(f, p->collective);
    fprintf(f,
            ",\n  \"protocol\": \"%s\",\n  \"inplace\": %s,\n  \"reuse_resources\": %s,\n"
            "  \"num_threads_per_block\": %d,\n  \"use_double_scratch_buffer\": %s,\n  \"buffer_alignment\": %d,\n"
            "  \"min_message_size\": %" PRIu64 ",\n  \"max_message_size\": %" PRIu64 ",\n  \"gpus\": [\n",
            p->packets ? "LL" : "Simple", p->inplace ? "true" : "false", p->reuse_resources ? "true" : "false",
            p->threads, p->double_scratch ? "true" : "false", p->alignment, p->min_bytes, p->max_bytes);
    for (int g = 0; g < p->ngpus; g++)
        gpu(f, &p->gpus[g], g == p->ngpus - 1);
    fputs("  ]\n}\n", f);
    if (fflush(f) || ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write the MSCCL++ plan");
    return TC_OK;
}
