// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal to ProbeScope::runut: the per-tensor part of the judge (run-ut-spec §5.2-5.5), split from
// standards.cpp, which handles structure, dispatch and cell text.

#include "core/runut/standards.h"

namespace probescope::runut::detail {

/// msprobe's _compare_torch_tensor: fills the dtype/shape cells, the new-standard columns, the legacy
/// columns, status and message of `row`.
void compareTensors(const tensor::Tensor& bench, const tensor::Tensor& device, const CompareContext& ctx,
                    DetailRow& row);

/// msprobe's _compare_dropout: pass when the share of zeros differs by less than 0.1 (numel >= 100).
bool dropoutPasses(const tensor::Tensor& bench, const tensor::Tensor& device);

/// Python's str() of a torch.Size: "torch.Size([2, 3])"; and of a shape tuple: "(2, 3)", "(5,)", "()".
std::string torchSizeText(const std::vector<std::int64_t>& shape);
std::string shapeTupleText(const std::vector<std::int64_t>& shape);

} // namespace probescope::runut::detail
