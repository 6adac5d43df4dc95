/*
 * MSCCL XML: the program object, targets and their limits, and the writer (man 5 tacosc-msccl).
 * The reader is src/msccl/read.c, the verifier src/msccl/verify.c.
 *
 * The writer prints one element per line with two-space indentation, double quotes, every required
 * attribute and no declaration, in id order: the same program always gives the same bytes.  It formats
 * numbers itself into a buffer (a plan of millions of steps is written at disk speed).
 *
 * Limits come from the runtimes' sources (cited per field in include/tacos/msccl.h):
 * Azure/msccl-executor-nccl and ROCm/rccl src/include/msccl/msccl_struct.h (MSCCL_MAX_NUM_STEPS 64,
 * MSCCL_MAX_NUM_THREAD_BLOCKS 1024 / 64, MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL 32, int8_t dependentBid,
 * int16_t offsets), src/include/msccl/msccl_parser.h (MAX_SUBS 1024, MAX_NODES 4096), src/include/device.h
 * (MAXCHANNELS 32 / 128), ROCm/rccl src/graph/connect.cc (the device's channel limit: the CU count on
 * gfx94x parts with 20, 38 or 80 CUs, 128 on other gfx94x, 32 elsewhere, at most 64 across nodes; RCCL
 * drops an algorithm needing more, src/misc/msccl/msccl_lifecycle.cc) and ROCm/rccl
 * src/misc/msccl/msccl_setup.cc (mscclSetupKernel refuses fused step types).
 */
#include "tacos/msccl.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[TC_MS_TYPE_COUNT] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re",
                                                         "nop"};

const char *tc_msccl_type_name(tc_msccl_type t)
{
    return (unsigned)t < TC_MS_TYPE_COUNT ? type_names[t] : "?";
}

const char *tc_msccl_buf_name(int b)
{
    return b == TC_MS_BUF_I ? "i" : b == TC_MS_BUF_O ? "o" : b == TC_MS_BUF_S ? "s" : "?";
}

void tc_msccl_free(tc_msccl *m)
{
    if (!m)
        return;
    if (m->gpus)
        for (int g = 0; g < m->ngpus; g++) {
            for (int t = 0; t < m->gpus[g].n_tbs; t++)
                free(m->gpus[g].tbs[t].steps);
            free(m->gpus[g].tbs);
        }
    free(m->gpus);
    free(m->name);
    free(m);
}

int tc_msccl_type_recvs(int t)
{
    return t == TC_MS_RECV || t == TC_MS_RCS || t == TC_MS_RRS || t == TC_MS_RRC || t == TC_MS_RRCS;
}

int tc_msccl_type_sends(int t)
{
    return t == TC_MS_SEND || t == TC_MS_RCS || t == TC_MS_RRS || t == TC_MS_RRCS;
}

int tc_msccl_type_fused(int t)
{
    return t == TC_MS_RCS || t == TC_MS_RRS || t == TC_MS_RRC || t == TC_MS_RRCS;
}

void tc_msccl_limits_get(tc_msccl_target t, tc_msccl_limits *out)
{
    memset(out, 0, sizeof *out);
    out->target = t;
    out->fused_ok = 1;
    if (t == TC_TARGET_EXEC) { /* tacos-run replays anything the format allows */
        out->max_steps_per_tb = out->max_tbs_per_gpu = out->max_channels = out->hard_channels = INT_MAX;
        out->max_depid = out->max_gpus = out->max_nodes = out->max_peers_per_chan = out->max_offset = INT_MAX;
        return;
    }
    out->max_steps_per_tb = 64;
    out->max_depid = 127;
    out->max_gpus = 1024;
    out->max_nodes = 4095;
    out->max_peers_per_chan = 32;
    out->max_offset = 32767;
    switch (t) {
    case TC_TARGET_RCCL:
        out->max_tbs_per_gpu = 64;
        out->max_channels = 20; /* safe on every device; --max-channels raises it */
        out->hard_channels = 128;
        out->fused_ok = 0;
        break;
    case TC_TARGET_COMMON: /* refused by both runtimes: the looser of each pair */
        out->max_tbs_per_gpu = 1024;
        out->max_channels = out->hard_channels = 128;
        break;
    default:
        out->max_tbs_per_gpu = 1024;
        out->max_channels = out->hard_channels = 32;
        break;
    }
}

tc_status tc_msccl_target_parse(const char *s, tc_msccl_target *out)
{
    static const struct { const char *name; tc_msccl_target t; } names[] = {
        {"nccl", TC_TARGET_NCCL}, {"rccl", TC_TARGET_RCCL}, {"common", TC_TARGET_COMMON}, {"tacos-run", TC_TARGET_EXEC},
    };
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) {
            *out = names[i].t;
            return TC_OK;
        }
    return TC_ERR_INVALID;
}

const char *tc_msccl_target_name(tc_msccl_target t)
{
    return t == TC_TARGET_RCCL ? "RCCL" : t == TC_TARGET_COMMON ? "NCCL and RCCL" : t == TC_TARGET_EXEC ? "tacos-run" : "NCCL";
}

void tc_msccl_lower_opts_init(tc_msccl_lower_opts *o)
{
    memset(o, 0, sizeof *o);
    o->target = TC_TARGET_NCCL;
    o->proto = "Simple";
    o->inplace = 1;
    o->outofplace = 0;
}

tc_status tc_msccl_create(const char *name, tc_coll coll, int ngpus, tc_msccl **out)
{
    tc_msccl *m = calloc(1, sizeof *m);
    if (!m)
        return TC_ERR_NOMEM;
    m->name = tc_strdup(name ? name : "tacosc");
    m->gpus = calloc(ngpus > 0 ? (size_t)ngpus : 1, sizeof *m->gpus);
    if (!m->name || !m->gpus) {
        tc_msccl_free(m);
        return TC_ERR_NOMEM;
    }
    strcpy(m->proto, "Simple");
    m->coll = coll;
    m->ngpus = ngpus;
    m->nchannels = 1;
    m->inplace = 1;
    m->root = -1;
    for (int g = 0; g < ngpus; g++)
        m->gpus[g].id = g;
    *out = m;
    return TC_OK;
}

tc_status tc_msccl_tb_add(tc_msccl_gpu *g, int send, int recv, int chan, tc_msccl_tb **out)
{
    if (g->n_tbs == g->cap_tbs) {
        int cap = g->cap_tbs ? 2 * g->cap_tbs : 8;
        tc_msccl_tb *p = realloc(g->tbs, (size_t)cap * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        g->tbs = p;
        g->cap_tbs = cap;
    }
    tc_msccl_tb *tb = &g->tbs[g->n_tbs];
    memset(tb, 0, sizeof *tb);
    tb->id = g->n_tbs++;
    tb->send = send;
    tb->recv = recv;
    tb->chan = chan;
    if (out)
        *out = tb;
    return TC_OK;
}

tc_status tc_msccl_step_add(tc_msccl_tb *tb, const tc_msccl_step *st)
{
    if (tb->n_steps == tb->cap_steps) {
        int cap = tb->cap_steps ? 2 * tb->cap_steps : 8;
        tc_msccl_step *p = realloc(tb->steps, (size_t)cap * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        tb->steps = p;
        tb->cap_steps = cap;
    }
    tb->steps[tb->n_steps] = *st;
    tb->steps[tb->n_steps].s = tb->n_steps;
    tb->n_steps++;
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Writer                                                                                            */

/* Output buffer: numbers are formatted by hand, the buffer goes out with fwrite. */
typedef struct wbuf { char b[1 << 16]; size_t n; FILE *f; } wbuf;

static void w_flush(wbuf *w)
{
    if (w->n)
        fwrite(w->b, 1, w->n, w->f);
    w->n = 0;
}

static void w_mem(wbuf *w, const char *s, size_t n)
{
    if (w->n + n > sizeof w->b)
        w_flush(w);
    if (n > sizeof w->b) {
        fwrite(s, 1, n, w->f);
        return;
    }
    memcpy(w->b + w->n, s, n);
    w->n += n;
}

static void w_u64(wbuf *w, unsigned long long v)
{
    char t[24];
    int k = 0;
    do
        t[k++] = (char)('0' + v % 10);
    while ((v /= 10));
    if (w->n + 24 > sizeof w->b)
        w_flush(w);
    while (k)
        w->b[w->n++] = t[--k];
}

static void w_int(wbuf *w, int v)
{
    if (v < 0) {
        w_mem(w, "-", 1);
        w_u64(w, (unsigned long long)(-(long long)v));
    } else {
        w_u64(w, (unsigned long long)v);
    }
}

static void w_str(wbuf *w, const char *s)
{
    w_mem(w, s, strlen(s));
}

/* a string literal, its length known at compile time */
#define W_LIT(w, lit) w_mem((w), (lit), sizeof(lit) - 1)
/* ` key="` value `"` */
#define W_ATTR(w, lit, v) (W_LIT(w, lit), w_int((w), (v)), W_LIT(w, "\""))

tc_status tc_msccl_write(tc_ctx *ctx, const tc_msccl *m, FILE *f)
{
    wbuf *w = malloc(sizeof *w);
    if (!w)
        return TC_ERR_NOMEM;
    w->n = 0;
    w->f = f;
    /* the name: at most 255 bytes, none that the runtime's parser or XML read differently */
    char name[256];
    snprintf(name, sizeof name, "%s", m->name && m->name[0] ? m->name : "tacosc");
    for (char *p = name; *p; p++)
        if ((unsigned char)*p < 32 || *p == '"' || *p == '<' || *p == '&' || *p == 127)
            *p = '_';
    if (m->unwind > 0 || m->switch_model > 0 || m->link_model != TC_LINK_TACOS) {
        /* the topology the plan's time is for, which MSCCL XML has no attribute for: a comment, which the
         * runtimes' parser skips (msccl_parser.cc mscclXmlGetNode, mscclXmlSkipComment) and tacosc reads */
        char c[160];
        int n = snprintf(c, sizeof c, "<!-- tacosc:");
        const char *sep = " ";
        if (m->unwind > 0) {
            n += snprintf(c + n, sizeof c - (size_t)n, "%sunwind %d", sep, m->unwind);
            sep = ", ";
        }
        if (m->switch_model > 0) {
            n += snprintf(c + n, sizeof c - (size_t)n, "%sswitch-model %s", sep,
                          tc_switch_model_name((tc_switch_model)(m->switch_model - 1)));
            sep = ", ";
        }
        if (m->link_model != TC_LINK_TACOS)
            n += snprintf(c + n, sizeof c - (size_t)n, "%slink-model %s", sep,
                          tc_link_model_name((tc_link_model)m->link_model));
        snprintf(c + n, sizeof c - (size_t)n, " -->\n");
        w_str(w, c);
    }
    W_LIT(w, "<algo name=\"");
    w_str(w, name);
    W_LIT(w, "\" proto=\"");
    w_str(w, m->proto);
    W_LIT(w, "\"");
    W_ATTR(w, " nchannels=\"", m->nchannels);
    W_ATTR(w, " nchunksperloop=\"", m->nchunksperloop);
    W_ATTR(w, " ngpus=\"", m->ngpus);
    W_LIT(w, " coll=\"");
    w_str(w, tc_coll_name(m->coll));
    W_LIT(w, "\"");
    W_ATTR(w, " inplace=\"", m->inplace ? 1 : 0);
    W_ATTR(w, " outofplace=\"", m->outofplace ? 1 : 0);
    W_LIT(w, " minBytes=\"");
    w_u64(w, (unsigned long long)m->min_bytes);
    W_LIT(w, "\" maxBytes=\"");
    w_u64(w, (unsigned long long)m->max_bytes);
    W_LIT(w, "\">\n");
    for (int g = 0; g < m->ngpus; g++) {
        const tc_msccl_gpu *gp = &m->gpus[g];
        W_ATTR(w, "  <gpu id=\"", gp->id);
        W_ATTR(w, " i_chunks=\"", gp->i_chunks);
        W_ATTR(w, " o_chunks=\"", gp->o_chunks);
        W_ATTR(w, " s_chunks=\"", gp->s_chunks);
        W_LIT(w, ">\n");
        for (int t = 0; t < gp->n_tbs; t++) {
            const tc_msccl_tb *tb = &gp->tbs[t];
            W_ATTR(w, "    <tb id=\"", tb->id);
            W_ATTR(w, " send=\"", tb->send);
            W_ATTR(w, " recv=\"", tb->recv);
            W_ATTR(w, " chan=\"", tb->chan);
            W_LIT(w, ">\n");
            for (int k = 0; k < tb->n_steps; k++) {
                const tc_msccl_step *s = &tb->steps[k];
                W_ATTR(w, "      <step s=\"", s->s);
                W_LIT(w, " type=\"");
                w_str(w, tc_msccl_type_name((tc_msccl_type)s->type));
                W_LIT(w, "\" srcbuf=\"");
                w_mem(w, tc_msccl_buf_name(s->srcbuf), 1);
                W_LIT(w, "\"");
                W_ATTR(w, " srcoff=\"", s->srcoff);
                W_LIT(w, " dstbuf=\"");
                w_mem(w, tc_msccl_buf_name(s->dstbuf), 1);
                W_LIT(w, "\"");
                W_ATTR(w, " dstoff=\"", s->dstoff);
                W_ATTR(w, " cnt=\"", s->cnt);
                W_ATTR(w, " depid=\"", s->depid);
                W_ATTR(w, " deps=\"", s->deps);
                W_ATTR(w, " hasdep=\"", s->hasdep ? 1 : 0);
                W_LIT(w, "/>\n");
            }
            W_LIT(w, "    </tb>\n");
        }
        W_LIT(w, "  </gpu>\n");
    }
    W_LIT(w, "</algo>\n");
    w_flush(w);
    free(w);
    if (ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "writing the MSCCL XML failed: %s", strerror(errno));
    return TC_OK;
}


/* The writer's half of tc_msccl_write_checked, in its own thread with its own context. */
typedef struct wjob {
    const tc_msccl *m;
    FILE *f;
    tc_ctx ctx;
    tc_diag_rec diag;  /* the writer's first error */
    tc_status st;
    int err;    /* the writer thread's errno when it failed (errno is per thread) */
} wjob;

static void *write_job(void *arg)
{
    wjob *j = arg;
    j->st = tc_msccl_write(&j->ctx, j->m, j->f);
    j->err = errno;
    return NULL;
}

tc_status tc_msccl_write_checked(tc_ctx *ctx, const tc_msccl *m, const tc_msccl_limits *lim, const char *name,
                                 FILE *f, tc_status *verified)
{
    wjob j;
    memset(&j, 0, sizeof j);
    j.m = m;
    j.f = f;
    tc_ctx_init(&j.ctx);
    j.ctx.sink = tc_diag_record;
    j.ctx.sink_user = &j.diag;
    pthread_t th;
    int threaded = pthread_create(&th, NULL, write_job, &j) == 0;
    *verified = tc_msccl_verify(ctx, m, lim, name);
    if (threaded)
        pthread_join(th, NULL);
    else
        write_job(&j);
    if (j.st && j.diag.have) { /* the writer's message, once, through the caller's context */
        errno = j.err; /* for a sink that reads the cause of a failed stream */
        tc_error(ctx, j.st, j.diag.file[0] ? j.diag.file : NULL, j.diag.line, "%s", j.diag.msg);
    }
    return j.st;
}
