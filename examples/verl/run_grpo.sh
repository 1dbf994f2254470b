#!/usr/bin/env bash
# GRPO on OracleProto's `rl` config with verl 0.9.1 (one GPU node), multi-turn with the
# time-masked web_search tool. Run from the project root after `dvc repro` (hub/ built):
#
#   pip install "verl==0.9.1" && bash examples/verl/run_grpo.sh Qwen/Qwen3-1.7B
#
# Keys checked against verl 0.9.1's generated trainer config:
# - the reward is read from reward.custom_reward_function.{path,name} (not the top-level
#   custom_reward_function, which 0.9 no longer reads for the PPO trainer);
# - data.max_prompt_length: the longest RL prompt of the sample is 1,922 characters
#   (data/export/summary.json, rl.train_prompt_chars_max); at >= 3 characters per token
#   for English BPE vocabularies that is <= 641 tokens, so 1024 leaves room for the chat
#   template and the tool schema (verl's default, 512, would truncate or drop them);
# - the tool is created per call with the row's extra_info.tools_kwargs (end_date = χ).
set -euo pipefail
MODEL=${1:?usage: run_grpo.sh MODEL_PATH_OR_ID}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH="$ROOT/examples/verl:${PYTHONPATH:-}"

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$ROOT/hub/data/rl/train-00000-of-00001.parquet" \
    data.val_files="$ROOT/hub/data/rl/test-00000-of-00001.parquet" \
    data.prompt_key=prompt \
    data.max_prompt_length=1024 \
    data.max_response_length=2048 \
    data.filter_overlong_prompts=True \
    data.truncation=error \
    data.train_batch_size=32 \
    actor_rollout_ref.model.path="$MODEL" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.n=4 \
    actor_rollout_ref.rollout.multi_turn.enable=True \
    actor_rollout_ref.rollout.multi_turn.max_assistant_turns=6 \
    actor_rollout_ref.rollout.multi_turn.tool_config_path="$ROOT/examples/verl/tool_config.yaml" \
    actor_rollout_ref.rollout.agent.default_agent_loop=tool_agent \
    reward.custom_reward_function.path="$ROOT/oracleproto/export/rewards.py" \
    reward.custom_reward_function.name=compute_score \
    trainer.n_gpus_per_node=1 \
    trainer.nnodes=1 \
    trainer.total_epochs=1 \
    trainer.project_name=oracleproto \
    trainer.experiment_name=grpo-rl
