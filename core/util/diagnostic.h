// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace probescope {

enum class Severity : std::uint8_t { Info, Warning, Error };

/// Where a problem was found. Line and column are 1-based; 0 means unknown.
struct SourceLocation
{
    std::string file;
    std::optional<std::uint64_t> offset; ///< byte offset into the file
    std::uint32_t line = 0;
    std::uint32_t column = 0;
};

/// The whole of `file`, with no line, column or offset: where a problem is about a file or folder as such.
SourceLocation fileLocation(const std::filesystem::path& file);

/**
 * @brief One finding about the input, fatal or not.
 *
 * `id` is stable across releases (tests and scripts may match on it), e.g. "json.truncated",
 * "tensor.shape-mismatch". `message` is for people and may change.
 */
struct Diagnostic
{
    Severity severity = Severity::Error;
    std::string id;
    SourceLocation location;
    std::string message;

    /// "file:line:col: error [id]: message" (the form compilers use, so editors can jump to it).
    std::string format() const;
};

Diagnostic makeError(std::string id, SourceLocation location, std::string message);
Diagnostic makeWarning(std::string id, SourceLocation location, std::string message);

using Diagnostics = std::vector<Diagnostic>;

bool hasErrors(const Diagnostics& diagnostics);

/// A value or the error that prevented it. Exceptions never cross the core API.
template<typename T>
class Result
{
public:
    Result(T value)
        : m_state(std::move(value))
    {
    }
    Result(Diagnostic error)
        : m_state(std::move(error))
    {
    }

    bool ok() const { return std::holds_alternative<T>(m_state); }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<T>(m_state); }
    const T& value() const& { return std::get<T>(m_state); }
    T&& value() && { return std::get<T>(std::move(m_state)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Diagnostic& error() const { return std::get<Diagnostic>(m_state); }

private:
    std::variant<T, Diagnostic> m_state;
};

/**
 * @brief Progress and cancellation for long operations.
 *
 * Implementations must be thread-safe if an operation reports from worker threads.
 */
class ProgressSink
{
public:
    virtual ~ProgressSink() = default;
    virtual void setRange(std::uint64_t total) = 0;
    virtual void advance(std::uint64_t done) = 0;
    virtual bool isCancelled() const = 0;
};

} // namespace probescope
