// SPDX-License-Identifier: Apache-2.0
// The perturbation layers and comparisons of the free benchmark (run-ut-spec §11.3, §11.4) on single
// tensors: freebenchtorch.cpp's building blocks, declared for the unit tests.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>

namespace probescope::collect::freebench {

/// A perturbed tensor, or nullopt with the reason the perturbation was cancelled.
struct LayerResult
{
    std::optional<at::Tensor> tensor;
    std::string cancelReason;
};

/// add_noise: where(|x| > sqrt(eps), x + eps, x) in x's dtype; eps by dtype (bf16 1e-4, fp16 1e-6,
/// fp32 1e-8, fp64 1e-16). Cancelled for other dtypes, empty tensors and max|x| < eps.
LayerResult addNoise(const at::Tensor& x);
/// bit_noise: the least significant bit of every element with |x| > the dtype's smallest normal flipped.
LayerResult bitNoise(const at::Tensor& x);
/// change_value: first and last swapped (1-D: elements; more: t[0][0] and t[-1][-1]).
LayerResult changeValue(const at::Tensor& x);

/// The check's ratio of one output tensor (§11.4), or a sign flip.
struct Ratio
{
    bool flip = false;
    double value = 1;
};
Ratio tensorRatio(const at::Tensor& original, const at::Tensor& perturbed, bool backward);

} // namespace probescope::collect::freebench
