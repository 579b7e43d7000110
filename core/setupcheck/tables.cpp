// SPDX-License-Identifier: Apache-2.0
#include "core/setupcheck/tables.h"

#include <array>

namespace probescope::setupcheck {

namespace {

constexpr EnvDefault kFalse { EnvDefault::Kind::Bool, {}, 0 };
constexpr EnvDefault kNoneText { EnvDefault::Kind::Text, "None", 0 }; // YAML 1.1: `None` is a string, not null
constexpr EnvDefault kZero { EnvDefault::Kind::Int, {}, 0 };
constexpr EnvDefault kOne { EnvDefault::Kind::Int, {}, 1 };

// env.yaml. Its fourth entry names HCCL_INTRA_ROCE_ENABLE again (under the key HCCL_INTRA_PICE_ENABLE, default 1):
// kept, since msprobe's result shows the variable twice.
const std::array<EnvEntry, 6> kEnv { {
    { "HCCL_DETERMINISTIC", EnvSide { "HCCL_DETERMINISTIC", kFalse }, EnvSide { "NCCL_DETERMINISTIC", kFalse } },
    { "HCCL_ALGO", EnvSide { "HCCL_ALGO", kNoneText }, EnvSide { "NCCL_ALGO", kNoneText } },
    { "HCCL_INTRA_ROCE_ENABLE", EnvSide { "HCCL_INTRA_ROCE_ENABLE", kZero }, std::nullopt },
    { "HCCL_INTRA_PICE_ENABLE", EnvSide { "HCCL_INTRA_ROCE_ENABLE", kOne }, std::nullopt },
    { "ASCEND_LAUNCH_BLOCKING", EnvSide { "ASCEND_LAUNCH_BLOCKING", kZero }, EnvSide { "CUDA_LAUNCH_BLOCKING", kZero } },
    { "ASCEND_RT_VISIBLE_DEVICES", EnvSide { "ASCEND_RT_VISIBLE_DEVICES", kNoneText },
      EnvSide { "CUDA_VISIBLE_DEVICES", kNoneText } },
} };

const std::array<std::string_view, 8> kDependencies { "transformers", "deepspeed", "megatron", "numpy",
                                                       "datasets",     "peft",      "mindspore", "torch" };

const std::array<std::string_view, 2> kLr { "lr", "learningrate" };
const std::array<std::string_view, 3> kBatch { "batch", "bs", "batch_size_per_gpu" };
const std::array<std::string_view, 3> kEpochs { "num_epochs", "max_epochs", "epoch" };
const std::array<std::string_view, 2> kWd { "wd", "weightdecay" };
const std::array<std::string_view, 2> kDropout { "dropout", "drop_rate" };
const std::array<std::string_view, 2> kDtype { "bf16", "fp32" };
const std::array<std::string_view, 1> kResidual { "fp32_residual_connection" };
const std::array<std::string_view, 1> kSoftmax { "attention_softmax_in_fp32" };

const std::array<AliasEntry, 8> kAliases { {
    { "learning_rate", kLr },
    { "batch_size", kBatch },
    { "epochs", kEpochs },
    { "weight_decay", kWd },
    { "dropout_rate", kDropout },
    { "compute_dtype", kDtype },
    { "residual_dtype", kResidual },
    { "softmax_compute_dtype", kSoftmax },
} };

} // namespace

std::span<const EnvEntry> envTable()
{
    return kEnv;
}

std::span<const std::string_view> dependencyTable()
{
    return kDependencies;
}

std::span<const AliasEntry> aliasTable()
{
    return kAliases;
}

} // namespace probescope::setupcheck
