// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/tensor.h"

#include <filesystem>

namespace probescope::tensor {

/// loadPt through LibTorch's zip reader and unpickler, with the same error ids: kept as the
/// reference the native reader is tested against. It accepts some archives loadPt refuses.
/// Lives in ProbeScope::tensortorch so that programs reading dumps do not load LibTorch.
Result<Tensor> loadPtWithTorch(const std::filesystem::path& path);

} // namespace probescope::tensor
