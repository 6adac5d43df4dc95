/* Reader of MSCCL++ execution plans (any producer's), with the plan loader's field rules (microsoft/mscclpp
 * 1f5f065d, src/core/executor/execution_plan.cc: ExecutionPlan::Impl, parseChannels, parseRemoteBuffer,
 * setupChannels, setupRemoteBuffers, setupSemaphores, setupOperation).  cJSON parses; every object's line
 * is found by counting the '{' that open objects outside strings, in document order, as cJSON builds them. */
#include "mscclpp_int.h"

#include <cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const cJSON *obj;
    int line;
} objline;

typedef struct {
    tc_ctx *ctx;
    const char *name;
    objline *ol;
    int nol, cap;
    int *open_line;   /* per '{' in the text, in order: its line */
    int nopen;
    int next;         /* objects numbered so far */
} rd;

static int cmp_ol(const void *a, const void *b)
{
    const cJSON *x = ((const objline *)a)->obj, *y = ((const objline *)b)->obj;
    return x < y ? -1 : x > y;
}

static tc_status scan_braces(rd *r, const char *buf, size_t len)
{
    int line = 1, instr = 0, cap = 0;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\n')
            line++;
        if (instr) {
            if (c == '\\')
                i++;
            else if (c == '"')
                instr = 0;
        } else if (c == '"')
            instr = 1;
        else if (c == '{') {
            if (r->nopen == cap) {
                cap = cap ? 2 * cap : 256;
                int *n = realloc(r->open_line, (size_t)cap * sizeof *n);
                if (!n)
                    return TC_ERR_NOMEM;
                r->open_line = n;
            }
            r->open_line[r->nopen++] = line;
        }
    }
    return TC_OK;
}

/* pre-order: an object's '{' comes before its members' */
static tc_status number(rd *r, const cJSON *j)
{
    for (; j; j = j->next) {
        if (cJSON_IsObject(j)) {
            if (r->nol == r->cap) {
                r->cap = r->cap ? 2 * r->cap : 256;
                objline *n = realloc(r->ol, (size_t)r->cap * sizeof *n);
                if (!n)
                    return TC_ERR_NOMEM;
                r->ol = n;
            }
            r->ol[r->nol++] = (objline){j, r->next < r->nopen ? r->open_line[r->next] : 0};
            r->next++;
        }
        if ((cJSON_IsObject(j) || cJSON_IsArray(j)) && number(r, j->child))
            return TC_ERR_NOMEM;
    }
    return TC_OK;
}

static int line_of(const rd *r, const cJSON *j)
{
    objline key = {j, 0};
    const objline *f = r->ol ? bsearch(&key, r->ol, (size_t)r->nol, sizeof key, cmp_ol) : NULL;
    return f ? f->line : 0;
}

static tc_status bad(rd *r, const cJSON *at, const char *what, const char *rule)
{
    return tc_error(r->ctx, TC_ERR_PARSE, r->name, line_of(r, at), "%s [%s]", what, rule);
}

/* an integer member: required unless def != NULL */
static tc_status get_int(rd *r, const cJSON *o, const char *key, const int *def, long lo, long hi, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char msg[200];
    if (!v && def) {
        *out = *def;
        return TC_OK;
    }
    /* the range first: a double outside long's cannot be cast */
    if (!v || !cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) ||
        v->valuedouble != floor(v->valuedouble)) {
        snprintf(msg, sizeof msg, "\"%s\" must be an integer from %ld to %ld", key, lo, hi);
        return bad(r, o, msg, "fields");
    }
    *out = (int)v->valuedouble;
    return TC_OK;
}

static const char *get_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static tc_status need_str(rd *r, const cJSON *o, const char *key, const char **out)
{
    char msg[120];
    if (!(*out = get_str(o, key))) {
        snprintf(msg, sizeof msg, "\"%s\" (a string) is missing", key);
        return bad(r, o, msg, "fields");
    }
    return TC_OK;
}

static const cJSON *arr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsArray(v) ? v : NULL;
}

static tc_status chan_type(rd *r, const cJSON *o, const char *key, int *out)
{
    const char *s = get_str(o, key);
    char msg[160];
    if ((*out = tc_mscclpp_ch_parse(s)) < 0) {
        snprintf(msg, sizeof msg, "\"%s\" is %s%s%s: memory, port, switch or none (\"Invalid channel type\")", key,
                 s ? "'" : "missing", s ? s : "", s ? "'" : "");
        return bad(r, o, msg, "channels");
    }
    return TC_OK;
}

static tc_status buf_type(rd *r, const cJSON *o, const char *key, int *out)
{
    const char *s = get_str(o, key);
    char msg[160];
    if ((*out = tc_mscclpp_buf_parse(s)) < 0) {
        snprintf(msg, sizeof msg, "\"%s\" is %s%s%s: i, o or s (\"Invalid buffer type\")", key, s ? "'" : "missing",
                 s ? s : "", s ? "'" : "");
        return bad(r, o, msg, "buffers");
    }
    return TC_OK;
}

static tc_status read_bufs(rd *r, const cJSON *op, const char *key, tc_mscclpp_buf *b, int *n)
{
    const cJSON *a = arr(op, key), *e;
    *n = 0;
    cJSON_ArrayForEach(e, a)
    {
        if (*n == TC_MSCCLPP_MAX_BUFS)
            return bad(r, op, "more buffers than an operation holds (MAX_LOCAL_BUFFER_PER_OPERATION + "
                              "MAX_CHANNEL_PER_OPERATION = 10)",
                       "limit-buffers");
        tc_mscclpp_buf *x = &b[(*n)++];
        tc_status st;
        x->type = x->id = -1;
        if (cJSON_GetObjectItemCaseSensitive(e, "buffer_id")) {
            if ((st = get_int(r, e, "buffer_id", NULL, 0, INT_MAX, &x->id)))
                return st;
        } else if (cJSON_GetObjectItemCaseSensitive(e, "switch_channel_id")) {
            x->type = -2; /* an NVLS buffer: the symbolic check does not model it */
            if ((st = get_int(r, e, "switch_channel_id", NULL, 0, INT_MAX, &x->id)))
                return st;
        } else if ((st = buf_type(r, e, "type", &x->type)))
            return st;
        if ((st = get_int(r, e, "index", NULL, 0, INT_MAX, &x->index)) ||
            (st = get_int(r, e, "size", NULL, 0, INT_MAX, &x->size)))
            return st;
    }
    return TC_OK;
}

static tc_status read_op(rd *r, const cJSON *j, tc_mscclpp_tb *tb, int inner)
{
    const char *name;
    tc_status st = need_str(r, j, "name", &name);
    if (st)
        return st;
    char msg[200];
    if (!tc_mscclpp_op_find(name)) {
        snprintf(msg, sizeof msg, "operation '%s' is not one the loader knows (\"Invalid operation type\")", name);
        return bad(r, j, msg, "operations");
    }
    tc_mscclpp_op op;
    mpp_op_init(&op, name);
    op.line = line_of(r, j);
    if (cJSON_GetObjectItemCaseSensitive(j, "channel_type") && (st = chan_type(r, j, "channel_type", &op.chan_type)))
        return st;
    const cJSON *e, *ids = arr(j, "channel_ids");
    cJSON_ArrayForEach(e, ids)
    {
        if (op.n_chan == TC_MSCCLPP_MAX_CHANNEL_PER_OPERATION)
            return bad(r, j, "more than MAX_CHANNEL_PER_OPERATION (8) channel_ids", "limit-channels");
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 255)
            return bad(r, j, "channel_ids must be integers from 0 to 255", "fields");
        op.chan[op.n_chan++] = (int)e->valuedouble;
    }
    if ((st = read_bufs(r, j, "src_buff", op.src, &op.n_src)) || (st = read_bufs(r, j, "dst_buff", op.dst, &op.n_dst)))
        return st;
    if (cJSON_GetObjectItemCaseSensitive(j, "barrier_id")) {
        static const int one = 1;
        if ((st = get_int(r, j, "barrier_id", NULL, 0, INT_MAX, &op.barrier_id)) ||
            (st = get_int(r, j, "num_threadblocks", &one, 1, INT_MAX, &op.n_tbs)))
            return st;
    }
    cJSON_ArrayForEach(e, arr(j, "semaphore_ids"))
    {
        if (op.n_sem == TC_MSCCLPP_MAX_DEVICE_SEMAPHORES)
            return bad(r, j, "more than MAX_DEVICE_SEMAPHORES (16) semaphore_ids", "limit-semaphores");
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble <= INT_MAX))
            return bad(r, j, "semaphore_ids must be integers from 0 to 2147483647", "fields");
        op.sem[op.n_sem++] = (int)e->valuedouble;
    }
    const cJSON *tbg = cJSON_GetObjectItemCaseSensitive(j, "tbg_info");
    if (tbg && ((st = get_int(r, tbg, "tb_id", NULL, 0, INT_MAX, &op.tbg_id)) ||
                (st = get_int(r, tbg, "tbg_size", NULL, 1, INT_MAX, &op.tbg_size))))
        return st;
    if (op.tbg_id >= op.tbg_size)
        return bad(r, j, "tbg_info: tb_id must be below tbg_size", "fields");
    op.pipeline = !strcmp(name, "pipeline");
    if (op.pipeline && inner)
        return bad(r, j, "a pipeline inside a pipeline", "operations");
    if ((st = mpp_op_add(tb, &op)))
        return st;
    if (op.pipeline) /* the loader appends the inner operations after the pipeline op */
        cJSON_ArrayForEach(e, arr(j, "ops")) if ((st = read_op(r, e, tb, 1))) return st;
    return TC_OK;
}

static tc_status read_ints(rd *r, const cJSON *o, const char *key, int **v, int *n)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr(o, key))
    {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > INT_MAX)
            return bad(r, o, "ids must be integers >= 0", "fields");
        if (mpp_int_push(v, n, (int)e->valuedouble))
            return TC_ERR_NOMEM;
    }
    return TC_OK;
}

static tc_status read_tb(rd *r, const cJSON *j, tc_mscclpp_gpu *g)
{
    tc_mscclpp_tb *tb;
    tc_status st = mpp_tb_add(g, &tb);
    if (st)
        return st;
    tb->line = line_of(r, j);
    if ((st = get_int(r, j, "id", NULL, 0, INT_MAX, &tb->id)))
        return st;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr(j, "ops")) if ((st = read_op(r, e, tb, 0))) return st;
    cJSON_ArrayForEach(e, arr(j, "channels"))
    {
        int t;
        if ((st = chan_type(r, e, "channel_type", &t)))
            return st;
        if (t == TC_MSCCLPP_CH_NONE)
            continue;
        if ((st = read_ints(r, e, "channel_ids", &tb->ch[t], &tb->n_ch[t])))
            return st;
    }
    cJSON_ArrayForEach(e, arr(j, "remote_buffer_refs"))
    {
        int t;
        if ((st = chan_type(r, e, "access_channel_type", &t)))
            return st;
        if (t != TC_MSCCLPP_CH_MEMORY && t != TC_MSCCLPP_CH_PORT)
            continue; /* the loader keeps only memory and port references */
        if ((st = read_ints(r, e, "remote_buffer_ids", &tb->rb[t], &tb->n_rb[t])))
            return st;
    }
    return TC_OK;
}

static tc_status read_gpu(rd *r, const cJSON *j, tc_mscclpp_gpu *g)
{
    tc_status st;
    g->line = line_of(r, j);
    if ((st = get_int(r, j, "id", NULL, INT_MIN, INT_MAX, &g->id)) ||
        (st = get_int(r, j, "input_chunks", NULL, 0, INT_MAX, &g->i_chunks)) ||
        (st = get_int(r, j, "output_chunks", NULL, 0, INT_MAX, &g->o_chunks)) ||
        (st = get_int(r, j, "scratch_chunks", NULL, 0, INT_MAX, &g->s_chunks)))
        return st;
    const cJSON *e, *p;
    cJSON_ArrayForEach(e, arr(j, "channels"))
    {
        int t, b;
        if ((st = chan_type(r, e, "channel_type", &t)))
            return st;
        if (t == TC_MSCCLPP_CH_SWITCH) { /* one NVLS channel per rank group */
            if ((st = buf_type(r, e, "buffer_type", &b)))
                return st;
            cJSON_ArrayForEach(p, arr(e, "rank_groups")) if ((st = mpp_chan_add(g, t, -1, b, line_of(r, p)))) return st;
            continue;
        }
        cJSON_ArrayForEach(p, arr(e, "connected_to"))
        {
            if (!cJSON_IsNumber(p) || !(p->valuedouble >= INT_MIN && p->valuedouble <= INT_MAX))
                return bad(r, e, "connected_to holds ranks (integers)", "channels");
            if ((st = mpp_chan_add(g, t, (int)p->valuedouble, -1, line_of(r, e))))
                return st;
        }
    }
    cJSON_ArrayForEach(e, arr(j, "remote_buffers"))
    {
        int rank, type, access = 0, t;
        if ((st = get_int(r, e, "rank", NULL, INT_MIN, INT_MAX, &rank)) || (st = buf_type(r, e, "type", &type)))
            return st;
        cJSON_ArrayForEach(p, arr(e, "access_channel_types"))
        {
            if ((t = tc_mscclpp_ch_parse(cJSON_IsString(p) ? p->valuestring : NULL)) < 0)
                return bad(r, e, "access_channel_types: memory, port, switch or none (\"Invalid channel type\")",
                           "channels");
            access |= 1 << t;
        }
        if ((st = mpp_rbuf_add(g, rank, type, access, line_of(r, e))))
            return st;
    }
    cJSON_ArrayForEach(e, arr(j, "semaphores"))
    {
        int v;
        if ((st = get_int(r, e, "init_value", NULL, INT_MIN, INT_MAX, &v)) ||
            (st = mpp_int_push(&g->sem_init, &g->n_sems, v)))
            return st;
    }
    cJSON_ArrayForEach(e, arr(j, "threadblocks")) if ((st = read_tb(r, e, g))) return st;
    return TC_OK;
}

static tc_status read_top(rd *r, const cJSON *root, tc_mscclpp **out)
{
    const char *name, *coll, *proto;
    tc_status st;
    if (!cJSON_IsObject(root))
        return bad(r, root, "an MSCCL++ plan is a JSON object", "fields");
    if ((st = need_str(r, root, "name", &name)) || (st = need_str(r, root, "collective", &coll)) ||
        (st = need_str(r, root, "protocol", &proto)))
        return st;
    const cJSON *ip = cJSON_GetObjectItemCaseSensitive(root, "inplace"), *gpus = arr(root, "gpus");
    if (!cJSON_IsBool(ip))
        return bad(r, root, "\"inplace\" (true or false) is missing", "fields");
    if (!gpus)
        return bad(r, root, "\"gpus\" (an array) is missing", "fields");
    int n = cJSON_GetArraySize(gpus);
    tc_mscclpp *p = NULL;
    if ((st = mpp_create(name, coll, n, &p)))
        return st;
    p->line = line_of(r, root);
    p->inplace = cJSON_IsTrue(ip);
    p->packets = !strcmp(proto, "LL");
    /* the executor tests protocol == "LL" and runs anything else as Simple (microsoft/mscclpp
     * src/executor/execution_plan.cc, ExecutionPlan::Impl::loadExecutionPlan): so do we, aloud */
    if (!p->packets && strcmp(proto, "Simple"))
        tc_warn(r->ctx, r->name, line_of(r, root), /* lines are known for objects */
                "protocol \"%s\" is neither \"Simple\" nor \"LL\": MSCCL++ runs it as Simple [protocol]", proto);
    static const int dthreads = TC_MSCCLPP_DEFAULT_THREADS_PER_BLOCK, dalign = TC_MSCCLPP_DEFAULT_ALIGNMENT;
    const cJSON *v;
    if ((st = get_int(r, root, "num_threads_per_block", &dthreads, 1, 1024, &p->threads)) ||
        (st = get_int(r, root, "buffer_alignment", &dalign, 1, INT_MAX, &p->alignment)))
        goto fail;
    p->reuse_resources = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "reuse_resources"));
    p->double_scratch = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "use_double_scratch_buffer"));
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "min_message_size")) && cJSON_IsNumber(v) && v->valuedouble > 0)
        p->min_bytes = v->valuedouble >= 1.8e19 ? UINT64_MAX : (uint64_t)v->valuedouble;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "max_message_size")) && cJSON_IsNumber(v) && v->valuedouble >= 0)
        p->max_bytes = v->valuedouble >= 1.8e19 ? UINT64_MAX : (uint64_t)v->valuedouble;
    int g = 0;
    cJSON_ArrayForEach(v, gpus) if ((st = read_gpu(r, v, &p->gpus[g++]))) goto fail;
    *out = p;
    return TC_OK;
fail:
    tc_mscclpp_free(p);
    return st;
}

tc_status tc_mscclpp_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_mscclpp **out)
{
    rd r = {.ctx = ctx, .name = name};
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    tc_status st = TC_OK;
    if (!root) {
        int line = 1;
        for (const char *c = buf; end && c < end && c < buf + len; c++)
            line += *c == '\n';
        return tc_error(ctx, TC_ERR_PARSE, name, line, "malformed JSON");
    }
    if ((st = scan_braces(&r, buf, len)) || (st = number(&r, root)))
        goto done;
    if (r.nol) /* qsort of no array is undefined */
        qsort(r.ol, (size_t)r.nol, sizeof *r.ol, cmp_ol);
    st = read_top(&r, root, out);
done:
    cJSON_Delete(root);
    free(r.ol);
    free(r.open_line);
    return st;
}

tc_status tc_mscclpp_read(tc_ctx *ctx, const char *path, tc_mscclpp **out)
{
    char *buf = NULL;
    size_t len = 0;
    tc_status st = tc_read_file(ctx, path, &buf, &len);
    if (!st)
        st = tc_mscclpp_read_mem(ctx, path, buf, len, out);
    free(buf);
    return st;
}

int tc_mscclpp_sniff(const char *buf, size_t len)
{
    size_t head = len < 4096 ? len : 4096, body = len < (1u << 20) ? len : (1u << 20);
    if (memmem(buf, head, "\"tacosc-schedule\"", 17))
        return 0;
    return memmem(buf, body, "\"gpus\"", 6) != NULL;
}
