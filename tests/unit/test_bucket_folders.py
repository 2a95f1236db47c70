"""The catalog finds a data directory's buckets again only when the directory changed, and
always sees a bucket added, removed or swapped while it serves."""

from __future__ import annotations

import os
import shutil

import pytest

from rollouts.store import Catalog, NotFound, Unavailable


def test_buckets_follow_the_directory_while_it_serves(tmp_path):
    root = tmp_path / "run"
    (root / "rollout_result" / "train").mkdir(parents=True)
    (root / "rollout_result" / "train" / "0.jsonl").write_text("{}\n")
    catalog = Catalog(root)
    assert catalog.buckets() == ["train"]
    (root / "rollout_result" / "eval").mkdir()
    assert catalog.buckets() == ["train", "eval"]
    shutil.rmtree(root / "rollout_result" / "train")
    assert catalog.buckets() == ["eval"]
    with pytest.raises(NotFound):
        catalog.bucket_dir("train")
    shutil.rmtree(root / "rollout_result")  # no buckets left: the folder itself is the bucket
    assert catalog.buckets() == ["default"]
    (root / "train").mkdir()
    assert catalog.buckets() == ["train"]
    shutil.rmtree(root)
    with pytest.raises(Unavailable):
        catalog.buckets()


def test_a_bucket_swapped_for_a_link_out_of_the_directory_is_not_followed(tmp_path):
    root, outside = tmp_path / "run", tmp_path / "outside"
    (root / "train").mkdir(parents=True)
    (root / "train" / "0.jsonl").write_text("{}\n")
    (outside / "train").mkdir(parents=True)
    (outside / "train" / "0.jsonl").write_text('{"secret": 1}\n')
    catalog = Catalog(root)
    assert catalog.step_path("train", "0.jsonl") == (root / "train" / "0.jsonl").resolve()
    shutil.rmtree(root / "train")
    os.symlink(outside / "train", root / "train")
    assert catalog.buckets() == ["default"]  # the link leads out: not a bucket
    with pytest.raises(NotFound):
        catalog.step_path("train", "0.jsonl")


def test_a_linked_bucket_whose_target_is_swapped_out_of_the_directory_is_dropped(tmp_path):
    root = tmp_path / "run"
    (root / "data" / "train").mkdir(parents=True)
    (root / "data" / "train" / "0.jsonl").write_text("{}\n")
    os.symlink(root / "data" / "train", root / "train")  # a bucket linked inside the directory
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "7.jsonl").write_text('{"secret": 1}\n')
    catalog = Catalog(root)
    assert catalog.buckets() == ["train"] and [s.step for s in catalog.steps("train")] == [0]
    shutil.rmtree(root / "data" / "train")
    os.symlink(outside, root / "data" / "train")  # its target now leads out
    assert catalog.buckets() == ["default"]
    with pytest.raises(NotFound):
        catalog.steps("train")
