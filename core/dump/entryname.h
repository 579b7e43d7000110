// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace probescope::dump {

enum class EntryKind : std::uint8_t {
    Api,            ///< Functional.relu.0.forward, Tensor.add.3.backward, Aten.mm.1.forward, Mint.add.0.forward
    Module,         ///< Module.conv2.Conv2d.forward.0 (PyTorch) or Cell.conv2.Conv2d.forward.0 (MindSpore)
    ParametersGrad, ///< Module.conv2.Conv2d.parameters_grad[.n]
    Debug,          ///< debug.json single-point save: {name}[_grad].{count}.debug
    Legacy,         ///< ptdbg_ascend underscore names: Functional_conv2d_0_forward
    Unknown,
};

enum class Direction : std::uint8_t { None, Forward, Backward };

/**
 * @brief The parts of a dump.json key. Views point into the key passed to parseEntryName().
 *
 * For modules `opName` is the module path plus class ("conv.conv1.Conv2d", or "0.conv1.Conv2d" when
 * a list of models was registered); `modulePath` and `moduleClass` split it.
 */
struct EntryName
{
    EntryKind kind = EntryKind::Unknown;
    Direction direction = Direction::None;
    std::string_view prefix;      ///< Functional, Tensor, Torch, Module, Cell, ... (empty for Debug)
    std::string_view opName;      ///< relu / conv.conv1.Conv2d / the debug variable name
    std::string_view modulePath;  ///< modules and parameters_grad only
    std::string_view moduleClass; ///< modules and parameters_grad only
    std::int64_t callIndex = -1;  ///< -1 when the key has none (old parameters_grad form)
    bool gradFlag = false;        ///< debug.json: "_grad" variable (save_backward)

    bool isModuleLike() const { return kind == EntryKind::Module || kind == EntryKind::ParametersGrad; }
    /// The key without direction and call index: "Functional.relu", "Module.conv.conv1.Conv2d".
    std::string stem() const;
};

EntryName parseEntryName(std::string_view key);

/// Key of the module call that a parameters_grad entry belongs to, or of the matching forward/backward
/// of an API/module ("Functional.relu.0.forward" <-> "Functional.relu.0.backward").
std::string counterpartKey(const EntryName& name, Direction direction);

const char* toString(EntryKind kind);
const char* toString(Direction direction);

} // namespace probescope::dump
