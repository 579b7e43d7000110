// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/session/session.h"
#include "core/tensor/resolver.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace probescope::ui {

/**
 * @brief Where the two tensor files of one compare row are, or why there are none.
 *
 * Both sides are found the way the compare found them: the row name's entry is flattened
 * (compare::flattenEntry) and the leaf of that row name gives its data_name, under the dump's
 * tensor folder. So any profile's table works (msprobe 26 writes a list into Data_name) and
 * nothing is read but dump.json, which is already in memory.
 */
struct TensorRowFiles
{
    enum class Kind : std::uint8_t {
        Tensors,       ///< at least the NPU file is known
        NotTensorMode, ///< a statistics or md5 dump: no tensor files exist
        NoTensor,      ///< the row is not a tensor (scalar, None, …) or its leaf has no data_name
        BadRow,        ///< no analysis, or the row index is out of range
    };
    Kind kind = Kind::BadRow;
    std::string message; ///< why the kind is not Tensors (for people)

    std::string npuName;   ///< row names
    std::string benchName; ///< "N/A" when the row has no bench counterpart
    std::filesystem::path npuDir;
    std::string npuDataName;
    std::filesystem::path benchDir;
    std::string benchDataName; ///< empty when there is no bench tensor
    std::string benchNote;     ///< why there is no bench tensor
    /// Each side's tensor folder bound to its dump folder (compare::tensorResolverOf), the one way to its files: a
    /// `dump_tensor_data` linked out of the dump folder is refused here as the compare refuses it. When null, the
    /// inspector binds npuDir/benchDir to the folder holding them (issue 33).
    std::shared_ptr<const tensor::TensorResolver> npuTensors;
    std::shared_ptr<const tensor::TensorResolver> benchTensors;

    /// The row's own metrics as the compare computed them (for cross-checking what the inspector shows).
    std::optional<double> tableCosine;
    std::optional<double> tableMaxAbsErr;
};

TensorRowFiles resolveTensorRow(const session::PairAnalysis& analysis, std::size_t row);

} // namespace probescope::ui
