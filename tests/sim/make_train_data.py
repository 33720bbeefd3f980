"""Generate tiny, random training inputs for NVIDIA's real GR00T N1.7 trainer (test inputs).

Nothing here is NVIDIA's weights or data: every weight is random, the demonstrations are
made up, and each file is a few kilobytes to a few megabytes, so a training step takes a
fraction of a second on a CPU. Run it with the training env's python, from (or with --checkout
pointing at) a GR00T checkout whose code is importable (installed, or on PYTHONPATH); it reads
examples/LIBERO/modality.json from there and builds the checkpoint with GR00T's own classes.
Nothing is downloaded (HF_HUB_OFFLINE=1).

    python make_train_data.py --checkout /opt/Isaac-GR00T --out /opt/sim-train-data

writes, replacing what was there:

  OUT/hf_home/hub/models--nvidia--Cosmos-Reason2-2B/
      A Hugging Face cache (HF_HOME layout: refs/main, snapshots/<rev>/) holding a tiny random
      Qwen3-VL under the id GR00T hard-codes: config, safetensors, a byte-level BPE tokenizer
      with the special tokens Qwen3-VL's processor and chat template use, image and video
      processor configs, chat template. Train with HF_HOME=OUT/hf_home HF_HUB_OFFLINE=1.
  OUT/model/
      A tiny random GR00T N1.7 checkpoint for --base_model_path: config.json (model_type
      Gr00tN1d7), model.safetensors, processor_config.json, statistics.json, embodiment_id.json.
  OUT/dataset/
      A LeRobot v2.1 LIBERO dataset for --dataset_path (--embodiment_tag LIBERO_PANDA): a few
      episodes, longer than the 16-step action horizon, of an arm reaching a pose and grasping
      (the actions follow from the state, so a short run's loss falls), parquet with
      observation.state (8) and action (7), H.264 mp4 videos of both cameras (image,
      wrist_image) that show the arm's progress, meta/info.json, episodes.jsonl, tasks.jsonl,
      modality.json (the checkout's LIBERO example), and GR00T's meta/stats.json and
      relative_stats.json. Those two are precomputed because only global rank 0 writes them at
      start: ranks on other nodes, each with its own copy, would find none. The directory must
      still be writable: rank 0 rewrites relative_stats.json at every start.

Fixed seeds and settings: the same checkout and env give byte-identical files.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

VLM_ID = "nvidia/Cosmos-Reason2-2B"  # hard-coded in GR00T's launch_finetune.py
SNAPSHOT = "0" * 40  # the revision refs/main names
EMBODIMENT = "libero_sim"  # EmbodimentTag.LIBERO_PANDA
SEED = 0
EPISODES, STEPS, FPS, IMAGE = 4, 40, 10, 64  # STEPS > the 16-step action horizon
# The demonstrations (see reach()): the pose (x, y, z, roll, pitch, yaw) the arm reaches, the
# share of the way each step moves it, and how near it closes the gripper.
GOAL = (0.45, 0.0, 0.25, 3.1, 0.0, 0.0)
GAIN, GRASP_AT = 0.25, 0.02
CAMERAS = ("image", "wrist_image")
TASKS = ("put the bowl on the plate", "open the top drawer")
# The text tokens plus the ones Qwen3-VL's processor and chat template insert.
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                  "<|image_pad|>", "<|video_pad|>")
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# GR00T N1.7's model config, cut to a few layers of a few dozen units (its defaults are a
# 2048-wide backbone cut at layer 12 and a 16-layer DiT). launch_finetune.py sets the same
# model_name, load_bf16, reproject_vision, backbone_trainable_params_fp32, use_relative_action.
TINY_MODEL: dict[str, Any] = {
    "model_name": VLM_ID, "model_dtype": "float32", "load_bf16": False, "use_flash_attention": False,
    "backbone_embedding_dim": 64, "select_layer": 1, "hidden_size": 64, "input_embedding_dim": 64,
    "max_seq_len": 256, "use_relative_action": True, "reproject_vision": False,
    "backbone_trainable_params_fp32": True,
    # LIBERO's own widths instead of GR00T's 132: the padded action values are noised like the
    # real ones and would feed this small head 125 values of pure noise beside LIBERO's 7.
    "max_state_dim": 8, "max_action_dim": 7,
    "diffusion_model_cfg": {"positional_embeddings": None, "num_layers": 2, "num_attention_heads": 4,
                            "attention_head_dim": 16, "norm_type": "ada_norm", "dropout": 0.2,
                            "final_dropout": True, "output_dim": 64, "interleave_self_attention": True},
}


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


# ---------------------------------------------------------------- the VLM in a Hugging Face cache

def build_tokenizer(corpus: list[str]):
    """A small byte-level BPE tokenizer with Qwen's special tokens, trained on `corpus` here."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2TokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=list(SPECIAL_TOKENS), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer)
    return Qwen2TokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                              unk_token=None, bos_token=None, chat_template=CHAT_TEMPLATE)


def vlm_config(tok):
    """A Qwen3-VL config of one text layer and one vision block (GR00T cuts at select_layer)."""
    from transformers import Qwen3VLConfig

    ids = {token: tok.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    return Qwen3VLConfig(
        text_config={"vocab_size": len(tok), "hidden_size": 64, "intermediate_size": 128,
                     "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "head_dim": 16, "max_position_embeddings": 2048, "tie_word_embeddings": True,
                     "rope_scaling": {"rope_type": "default", "mrope_section": [2, 3, 3]}},
        vision_config={"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                       "out_hidden_size": 64, "patch_size": 16, "spatial_merge_size": 2,
                       "temporal_patch_size": 2, "num_position_embeddings": 256,
                       "deepstack_visual_indexes": [0]},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        # Tied, as in the 2B model: an lm_head of its own would be a trainable parameter outside
        # the frozen LLM that no loss reaches, and DDP stops ("Expected to have finished reduction").
        tie_word_embeddings=True,
    )


def write_hf_cache(hf_home: Path) -> Path:
    """Save a tiny random Qwen3-VL where the hub cache looks VLM_ID up; return the snapshot."""
    import torch
    from transformers import (Qwen2VLImageProcessorFast, Qwen3VLForConditionalGeneration, Qwen3VLProcessor,
                              Qwen3VLVideoProcessor)

    repo = hf_home / "hub" / ("models--" + VLM_ID.replace("/", "--"))
    snapshot = repo / "snapshots" / SNAPSHOT
    tok = build_tokenizer([*TASKS, "user assistant system robot arm gripper"])
    torch.manual_seed(SEED)
    Qwen3VLForConditionalGeneration(vlm_config(tok)).save_pretrained(snapshot, safe_serialization=True)
    size = {"shortest_edge": 32 * 32, "longest_edge": 128 * 128}
    vision = {"patch_size": 16, "merge_size": 2, "temporal_patch_size": 2, "size": size}
    Qwen3VLProcessor(image_processor=Qwen2VLImageProcessorFast(**vision),
                     video_processor=Qwen3VLVideoProcessor(**vision),
                     tokenizer=tok, chat_template=CHAT_TEMPLATE).save_pretrained(snapshot)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(SNAPSHOT)
    return snapshot


# ---------------------------------------------------------------- the LeRobot v2.1 dataset

def write_video(path: Path, frames: list) -> None:
    """An H.264 mp4 (yuv420p, as LeRobot records it) that torchcodec 0.4 decodes."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=FPS, options={"crf": "30", "preset": "ultrafast", "g": "2"})
        stream.width = stream.height = IMAGE
        stream.pix_fmt = "yuv420p"
        for frame in frames:
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode())


def reach(rng) -> tuple[Any, Any]:
    """One episode's state (STEPS, 8) and action (STEPS, 7): the arm reaches GOAL and grasps.

    The pose starts 0.1 to 0.3 short of GOAL in each of its six values (as a demonstration
    starts away from the object) and each action moves it GAIN of the way there; the gripper
    closes (action 1, fingers to 0) once every value is within GRASP_AT of the goal, and is
    open (-1, fingers to 0.04) before. The state at a step fixes every later one, and so the
    whole 16-step action chunk GR00T predicts from it: a function the action head can learn.
    """
    import numpy as np

    goal = np.asarray(GOAL)
    pose = goal - rng.uniform(0.1, 0.3, len(goal))
    finger = 0.04
    state, action = [], []
    for _step in range(STEPS):
        grip = 1.0 if np.abs(goal - pose).max() < GRASP_AT else -1.0
        move = GAIN * (goal - pose)
        state.append([*pose, finger, -finger])
        action.append([*move, grip])
        pose = pose + move
        finger += 0.5 * ((0.0 if grip > 0 else 0.04) - finger)
    return np.asarray(state, dtype=np.float32), np.asarray(action, dtype=np.float32)


def camera_frames(rng, state) -> list:
    """A blocky random picture that slides sideways as the arm nears the goal along x (by 0.3 a
    full width): the frames show the state too, are cheap to encode and differ while it moves."""
    import numpy as np

    base = np.kron(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8), np.ones((IMAGE // 8, IMAGE // 8, 1), np.uint8))
    shifts = np.rint((GOAL[0] - state[:, 0]) / 0.3 * IMAGE).astype(int) % IMAGE
    return [np.roll(base, int(shift), axis=1) for shift in shifts]


def episode_table(state, action, episode: int, first_index: int):
    """One episode's parquet table: state (8) and action (7) of every step, and the indices."""
    import numpy as np
    import pyarrow as pa

    return pa.table({
        "observation.state": pa.array(list(state), type=pa.list_(pa.float32())),
        "action": pa.array(list(action), type=pa.list_(pa.float32())),
        "timestamp": pa.array(np.arange(STEPS, dtype=np.float32) / FPS),
        "frame_index": pa.array(np.arange(STEPS, dtype=np.int64)),
        "episode_index": pa.array(np.full(STEPS, episode, dtype=np.int64)),
        "index": pa.array(np.arange(first_index, first_index + STEPS, dtype=np.int64)),
        "task_index": pa.array(np.full(STEPS, episode % len(TASKS), dtype=np.int64)),
    })


def info_json(total_frames: int) -> dict[str, Any]:
    video = {"dtype": "video", "shape": [IMAGE, IMAGE, 3], "names": ["height", "width", "channel"],
             "info": {"video.fps": float(FPS), "video.height": IMAGE, "video.width": IMAGE, "video.channels": 3,
                      "video.codec": "h264", "video.pix_fmt": "yuv420p", "video.is_depth_map": False,
                      "has_audio": False}}
    scalar = {"shape": [1], "names": None}
    return {
        "codebase_version": "v2.1", "robot_type": "panda", "total_episodes": EPISODES,
        "total_frames": total_frames, "total_tasks": len(TASKS), "total_videos": len(CAMERAS) * EPISODES,
        "total_chunks": 1, "chunks_size": 1000, "fps": FPS, "splits": {"train": f"0:{EPISODES}"},
        "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
        "video_path": "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4",
        "features": {
            **{f"observation.images.{camera}": video for camera in CAMERAS},
            "observation.state": {"dtype": "float32", "shape": [8], "names": None},
            "action": {"dtype": "float32", "shape": [7], "names": None},
            "timestamp": {"dtype": "float32", **scalar},
            **{name: {"dtype": "int64", **scalar} for name in ("frame_index", "episode_index", "index", "task_index")},
        },
    }


def write_dataset(out: Path, checkout: Path) -> None:
    """The LeRobot v2.1 tree GR00T's LIBERO example trains on (statistics come later)."""
    import numpy as np
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED)
    meta = out / "meta"
    meta.mkdir(parents=True)
    shutil.copyfile(checkout / "examples" / "LIBERO" / "modality.json", meta / "modality.json")
    (out / "data" / "chunk-000").mkdir(parents=True)
    episodes = []
    for episode in range(EPISODES):
        name = f"episode_{episode:06d}"
        state, action = reach(rng)
        pq.write_table(episode_table(state, action, episode, episode * STEPS),
                       out / "data" / "chunk-000" / f"{name}.parquet")
        for camera in CAMERAS:
            write_video(out / "videos" / "chunk-000" / f"observation.images.{camera}" / f"{name}.mp4",
                        camera_frames(rng, state))
        episodes.append({"episode_index": episode, "tasks": [TASKS[episode % len(TASKS)]], "length": STEPS})
    write_json(meta / "info.json", info_json(EPISODES * STEPS))
    write_jsonl(meta / "episodes.jsonl", episodes)
    write_jsonl(meta / "tasks.jsonl", [{"task_index": i, "task": task} for i, task in enumerate(TASKS)])


# ---------------------------------------------------------------- the GR00T checkpoint

def gr00t_config(dataset: Path, work: Path):
    """GR00T's default config as launch_finetune.py fills it, with TINY_MODEL's model."""
    from gr00t.configs.base_config import get_default_config

    config = get_default_config().load_dict({"data": {"download_cache": False, "datasets": [
        {"dataset_paths": [str(dataset)], "mix_ratio": 1.0, "embodiment_tag": EMBODIMENT}]}})
    config.load_config_path = None
    for name, value in TINY_MODEL.items():
        setattr(config.model, name, value)
    config.training.start_from_checkpoint = None
    config.training.output_dir = str(work)
    return config


def rescale_embodiment_layers(model: Any) -> None:
    """Redraw the action head's per-embodiment weights (state and action encoders, action
    decoder) at a standard deviation of 1/sqrt(fan-in).

    GR00T draws them at 0.02, about 1/sqrt(fan-in) for its 1536-wide head. At this model's
    widths of 7 to 128 each such layer shrinks what passes through it several-fold: in a short
    run the head learns the actions' mean and little else, and the loss stops falling there.
    """
    import torch
    from gr00t.model.modules.embodiment_conditioned_mlp import CategorySpecificLinear

    generator = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, CategorySpecificLinear):
                fan_in = module.W.shape[1]
                module.W.copy_(torch.randn(module.W.shape, generator=generator) / fan_in ** 0.5)


def write_checkpoint(out: Path, dataset: Path, work: Path) -> None:
    """Build GR00T N1.7 from scratch with GR00T's own pipeline (random action head, the tiny VLM
    from the cache) and save it as a base checkpoint: weights and config, and the processor with
    the dataset's statistics and the embodiment ids."""
    import torch
    from gr00t.model.gr00t_n1d7.setup import Gr00tN1d7Pipeline

    config = gr00t_config(dataset, work)
    torch.manual_seed(SEED)
    pipeline = Gr00tN1d7Pipeline(config, save_cfg_dir=work)
    pipeline.setup()  # builds the model, computes meta/stats.json, loads the dataset
    rescale_embodiment_layers(pipeline.model)
    pipeline.model.save_pretrained(out, safe_serialization=True)
    pipeline.return_processor().save_pretrained(out)
    # As the trainer's run() does before its rank 0 writes the statistics: validate() fills the
    # action representations, which generate_rel_stats() needs to write relative_stats.json.
    from gr00t.data.embodiment_tags import EmbodimentTag
    from gr00t.data.stats import generate_rel_stats, generate_stats

    config.validate()
    generate_stats(dataset)
    generate_rel_stats(dataset, EmbodimentTag(EMBODIMENT))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", type=Path, required=True,
                        help="GR00T checkout: examples/LIBERO/modality.json is read, its code imported")
    parser.add_argument("--out", type=Path, required=True, help="writes OUT/hf_home, OUT/model, OUT/dataset")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    # Before anything imports huggingface_hub: the VLM resolves from this cache, offline.
    os.environ["HF_HOME"] = str(out / "hf_home")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")  # albumentations checks PyPI on import
    sys.path.insert(0, str(args.checkout.resolve()))
    for part in ("hf_home", "model", "dataset", ".work"):
        shutil.rmtree(out / part, ignore_errors=True)
    write_hf_cache(out / "hf_home")
    write_dataset(out / "dataset", args.checkout)
    work = out / ".work"  # the pipeline's experiment_cfg side files
    work.mkdir(parents=True)
    write_checkpoint(out / "model", out / "dataset", work)
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
