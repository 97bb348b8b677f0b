/* test-plan.c — what makes `vramsim plan`'s memory pruning exact: for
 * every layout of a small model (tp, pp, interleaving, ZeRO, SP,
 * recomputation, micro-batch, and a GQA + SwiGLU shape), the model-state
 * floor <= the generator's live peak, and live peak + context <= the
 * replay's demand; the states by hand for ZeRO 0-3; and the FLOP and
 * parameter arithmetic by hand. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "config/config.h"
#include "engine/replay.h"
#include "plan/plan.h"
#include "synth/synth.h"
#include "trace/trace.h"

static VsConfig *
preset (const char *name)
{
  if (g_getenv ("VRAMSIM_CONFIGS") == NULL)
    {
      g_autofree char *cwd = g_get_current_dir ();
      g_autofree char *dir = g_build_filename (cwd, "configs", NULL);
      g_setenv ("VRAMSIM_CONFIGS", dir, TRUE);
    }
  g_autoptr (GError) err = NULL;
  VsConfig *c = config_load (name, NULL, &err);
  g_assert_no_error (err);
  return c;
}

static SynthTrainOpts
small (void)
{
  SynthTrainOpts o = { 0 };
  o.layers = 4, o.hidden = 1024, o.heads = 16, o.seq = 256, o.batch = 1, o.vocab = 8192;
  o.precision = SYNTH_PREC_MIXED, o.optimizer = SYNTH_OPT_ADAM, o.checkpoint = SYNTH_CKPT_NONE;
  o.checkpoint_every = 1, o.dp = 1, o.grad_accum = 4, o.steps = 2, o.tp = 1, o.pp = 1;
  return o;
}

/* Generates O on CFG: its live peak; the replay's demand in *DEMAND. */
static guint64
live_and_demand (const SynthTrainOpts *o, const VsConfig *cfg, const char *dir, guint64 *demand)
{
  g_autoptr (GError) err = NULL;
  g_autofree char *path = g_build_filename (dir, "t.vtrace", NULL);
  SynthEmit *e = synth_emit_new (path, cfg, 0, "transformer-train", &err);
  g_assert_no_error (err);
  g_assert_true (synth_transformer_train (o, e, &err));
  guint64 live = synth_peak_device (e);
  g_assert_true (synth_emit_finish (e, &err));
  g_autoptr (VsTraceReader) r = trace_open (path, &err);
  g_assert_no_error (err);
  VsReplayOptions ro = { 0 };
  ro.keep_going = TRUE;
  cJSON *rep = replay_run (r, cfg, NULL, &ro, &err);
  g_assert_no_error (err);
  const cJSON *m = cJSON_GetObjectItemCaseSensitive (rep, "memory");
  *demand = (guint64) cJSON_GetObjectItemCaseSensitive (m, "device_demand_bytes")->valuedouble;
  cJSON_Delete (rep);
  g_unlink (path);
  return live;
}

static void
test_floors (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  g_autofree char *dir = g_dir_make_tmp ("test-plan-XXXXXX", NULL);
  guint n = 0;
  for (guint shape = 0; shape < 3; shape++)
    for (guint t = 1; t <= 2; t *= 2)
      for (guint p = 1; p <= 2; p *= 2)
        for (guint v = 1; v <= (p > 1 ? 2u : 1u); v++)
          for (guint z = 0; z < 4; z++)
            for (guint ck = 0; ck < 3; ck++)
              for (guint sp = 0; sp <= (t > 1 ? 1u : 0u); sp++)
                {
                  if (z >= 2 && p > 1)
                    continue;
                  SynthTrainOpts o = small ();
                  if (shape == 1)
                    o.kv_heads = 4, o.ffn = 2816, o.gated_mlp = TRUE;
                  if (shape == 2)
                    {
                      /* DeepSeek's: latent attention, a dense first layer, 4 experts and a shared one; fused attention through a window on every other layer. */
                      o.kv_lora = 256, o.q_lora = 384, o.qk_rope = 32, o.head_dim = 64, o.v_head = 48;
                      o.ffn = 512, o.gated_mlp = TRUE, o.experts = 4, o.top_k = 2, o.shared_ffn = 512;
                      o.dense_layers = 1, o.dense_ffn = 2816, o.flash_attn = TRUE, o.window = 128, o.global_every = 2;
                    }
                  o.tp = t, o.pp = p, o.virtual_stages = v, o.zero = z, o.sp = sp, o.dp = z ? 4 : 1;
                  o.checkpoint = ck == 0 ? SYNTH_CKPT_NONE : ck == 1 ? SYNTH_CKPT_SELECTIVE : SYNTH_CKPT_EVERY;
                  o.ddp_local = p > 1;
                  guint64 demand = 0, live = live_and_demand (&o, cfg, dir, &demand);
                  guint64 states = synth_train_state_device_bytes (&o);
                  if (!(states <= live && live + cfg->memory.context <= demand))
                    g_error ("shape %u t=%u p=%u v=%u z=%u ck=%u sp=%u: states %" G_GUINT64_FORMAT " live %"
                             G_GUINT64_FORMAT " + context %" G_GUINT64_FORMAT " demand %" G_GUINT64_FORMAT,
                             shape, t, p, v, z, ck, sp, states, live, cfg->memory.context, demand);
                  n++;
                }
  /* (t, p) = (1, 1): 4 stages x 3; (1, 2): 2 v x 2 stages x 3; (2, 1): 4 x 3 x 2 sp; (2, 2): 2 x 2 x 3 x 2; three shapes. */
  g_assert_cmpuint (n, ==, 3 * (12 + 12 + 24 + 24));
  g_rmdir (dir);
}

/* By hand: 4 layers of 12·1024² = 12582912 parameters, the embedding
 * 8192·1024 = 8388608: Ψ = 58720256 on one GPU. Mixed Adam: 2 + 2 + 12
 * bytes a parameter, and the optimizer step's fp32 gradients, 4 bytes a
 * parameter the rank updates; ZeRO over dp = 4 divides the optimizer and
 * those fp32 gradients (stage 1), the gradients too (2) and the
 * parameters too (3); the sizes divide by 4 exactly. */
static void
test_states_by_hand (void)
{
  const guint64 psi = 4 * 12582912ull + 8388608ull;
  const guint64 want[4] = { 20 * psi, 4 * psi + 16 * psi / 4, 2 * psi + 18 * psi / 4, 20 * psi / 4 };
  for (guint z = 0; z < 4; z++)
    {
      SynthTrainOpts o = small ();
      o.zero = z, o.dp = 4;
      g_assert_cmpuint (synth_train_state_device_bytes (&o), ==, want[z]);
    }
  /* tp = 2, pp = 2: stage 0 holds 2 layers and the embedding, halved. */
  SynthTrainOpts o = small ();
  o.tp = 2, o.pp = 2;
  g_assert_cmpuint (synth_train_state_device_bytes (&o), ==, 20 * (2 * 12582912ull + 8388608ull) / 2);
  g_assert_cmpfloat (plan_param_count (&o), ==, (double) psi);
}

/* FLOPs by hand for the small model, global batch 8: tokens 2048, a
 * layer's forward per token 2·12·1024² + 4·256·1024 = 26214400, the
 * logits 2·8192·1024 = 16777216 a token. */
static void
test_flops_by_hand (void)
{
  SynthTrainOpts o = small ();
  double layer = 2048.0 * 4 * 26214400, logits = 2048.0 * 16777216, ex, model;
  plan_step_flops (&o, 8, PLAN_CKPT_NONE, &ex, &model);
  g_assert_cmpfloat (model, ==, 3 * (layer + logits));
  g_assert_cmpfloat (ex, ==, model);
  plan_step_flops (&o, 8, PLAN_CKPT_FULL, &ex, &model);
  g_assert_cmpfloat (ex, ==, 4 * layer + 3 * logits);
  plan_step_flops (&o, 8, PLAN_CKPT_SELECTIVE, &ex, &model);
  g_assert_cmpfloat (ex, ==, model + 2048.0 * 4 * 4 * 256 * 1024);
  /* GQA + SwiGLU: attention 1024·(1024 + 2·4·64) + 1024² = 2621440, MLP
   * 3·1024·2816 = 8650752 a layer. */
  o.kv_heads = 4, o.ffn = 2816, o.gated_mlp = TRUE;
  g_assert_cmpfloat (plan_param_count (&o), ==, 4.0 * (2621440 + 8650752) + 8388608);
}

/* Latent attention and dense first layers by hand (the small model, 4
 * layers, global batch 8: 2048 tokens of 256). Attention: down
 * projections 1024·(384 + 256 + 32) = 688128, Q's up 384·16·96 = 589824,
 * KV's up 256·16·(64 + 48) = 458752, the output 16·48·1024 = 786432:
 * 2523136. Layer 0 dense, SwiGLU of 2816 (8650752); layers 1-3 MoE, 4
 * experts of 512 (3·1024·512 = 1572864 each), top 2, and the router
 * 4096. The attention core: QKᵀ on 64 + 32 dims, AV on 48, 2·256·16·144
 * FLOPs a token. */
static void
test_mla_dense_by_hand (void)
{
  SynthTrainOpts o = small ();
  o.kv_lora = 256, o.q_lora = 384, o.qk_rope = 32, o.head_dim = 64, o.v_head = 48;
  o.ffn = 512, o.gated_mlp = TRUE, o.experts = 4, o.top_k = 2, o.dense_layers = 1, o.dense_ffn = 2816;
  g_assert_cmpuint (synth_train_attn_params (&o), ==, 2523136);
  g_assert_cmpuint (synth_train_attn_replicated (&o), ==, 688128);
  g_assert_cmpuint (synth_train_core_width (&o), ==, 16 * 144);
  g_assert_cmpuint (synth_train_dense_count (&o), ==, 1);
  /* MoE on every second layer besides (layers 1 and 3), layer 0 dense first: 0 and 2 dense. */
  SynthTrainOpts every = o;
  every.moe_every = 2;
  g_assert_true (synth_train_layer_dense (&every, 0) && !synth_train_layer_dense (&every, 1)
                 && synth_train_layer_dense (&every, 2) && !synth_train_layer_dense (&every, 3));
  g_assert_cmpuint (synth_train_dense_count (&every), ==, 2);
  /* A window of 128 on layers 0 and 2 (every second layer global): a
   * query's keys 256 on two layers, 128 on two, 192 on average. */
  SynthTrainOpts plain = small (), win = small ();
  win.window = 128, win.global_every = 2;
  g_assert_true (synth_train_layer_local (&win, 0) && !synth_train_layer_local (&win, 1));
  double pe, pm, we, wm;
  plan_step_flops (&plain, 8, PLAN_CKPT_NONE, &pe, &pm);
  plan_step_flops (&win, 8, PLAN_CKPT_NONE, &we, &wm);
  g_assert_cmpfloat (fabs ((pm - wm) - 3 * 2048.0 * 4 * 2 * (256 - 192) * 2 * 1024), <=, 1e-9 * pm);
  g_assert_cmpfloat (plan_param_count (&o), ==, (2523136.0 + 8650752) + 3 * (2523136.0 + 4 * 1572864 + 4096) + 8388608);
  double ex, model;
  plan_step_flops (&o, 8, PLAN_CKPT_NONE, &ex, &model);
  double layers = 2 * (2523136.0 + 8650752) + 3 * 2 * (2523136.0 + 2 * 1572864 + 4096) + 4 * 2 * 256.0 * 16 * 144;
  g_assert_cmpfloat (fabs (model - 3 * 2048 * (layers + 2 * 8192.0 * 1024)), <=, 1e-6 * model);
  /* Stage 0's states under tp = 2, pp = 2: layers 0 (dense) and 1 (MoE),
   * their down projections whole, the rest halved, and half the
   * embedding, at 20 bytes a parameter. */
  o.tp = 2, o.pp = 2;
  guint64 whole = 688128, dense = (2523136 - whole + 8650752) / 2 + whole;
  guint64 moe = (2523136 - whole + 4 * 1572864) / 2 + whole + 4096;
  g_assert_cmpuint (synth_train_state_device_bytes (&o), ==, 20 * (dense + moe + 8388608 / 2));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/plan/floors", test_floors);
  g_test_add_func ("/plan/states-by-hand", test_states_by_hand);
  g_test_add_func ("/plan/flops-by-hand", test_flops_by_hand);
  g_test_add_func ("/plan/mla-dense-by-hand", test_mla_dense_by_hand);
  return g_test_run ();
}
