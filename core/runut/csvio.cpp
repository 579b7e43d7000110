// SPDX-License-Identifier: Apache-2.0
#include "core/runut/csvio.h"

#include "core/util/csv.h"
#include "core/util/fileio.h"
#include "core/util/outputfile.h"

namespace probescope::runut {

namespace {

void appendCell(std::string& out, std::string_view cell)
{
    appendCsvField(out, cell);
}

Diagnostic malformed(const std::string& file, std::uint32_t line, std::uint32_t column, std::string message)
{
    return makeError("csv.malformed", SourceLocation { file, std::nullopt, line, column }, std::move(message));
}

} // namespace

std::string csvLine(const std::vector<std::string>& cells)
{
    std::string out;
    if (cells.size() == 1 && cells.front().empty()) {
        out = "\"\"";
    } else {
        for (std::size_t i = 0; i < cells.size(); ++i) {
            if (i)
                out += ',';
            appendCell(out, cells[i]);
        }
    }
    out += "\r\n";
    return out;
}

std::optional<std::size_t> CsvTable::column(std::string_view name) const
{
    for (std::size_t i = 0; i < header.size(); ++i) {
        if (header[i] == name)
            return i;
    }
    return std::nullopt;
}

Result<CsvTable> parseCsvText(std::string_view text, const std::string& fileForMessages)
{
    if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom)
        text.remove_prefix(kUtf8Bom.size());

    CsvTable table;
    table.path = fileForMessages;
    std::vector<std::vector<std::string>> records;
    std::vector<std::uint32_t> lines;

    std::uint32_t line = 1;
    std::size_t lineStart = 0;
    std::size_t i = 0;
    const std::size_t n = text.size();
    while (i < n) {
        // One record starting at i.
        const std::uint32_t recordLine = line;
        std::vector<std::string> cells;
        std::string cell;
        bool blank = true; // a record with no characters at all is a blank line
        for (;;) {
            if (i < n && text[i] == '"') {
                blank = false;
                const std::uint32_t openLine = line;
                const std::size_t openColumn = i - lineStart + 1;
                ++i;
                for (;;) {
                    if (i >= n)
                        return malformed(fileForMessages, openLine, static_cast<std::uint32_t>(openColumn),
                                         "unterminated quoted field");
                    const char c = text[i];
                    if (c == '"') {
                        if (i + 1 < n && text[i + 1] == '"') {
                            cell += '"';
                            i += 2;
                            continue;
                        }
                        ++i;
                        break;
                    }
                    if (c == '\0')
                        return malformed(fileForMessages, line, static_cast<std::uint32_t>(i - lineStart + 1),
                                         "NUL byte in the file");
                    if (c == '\n' || (c == '\r' && !(i + 1 < n && text[i + 1] == '\n'))) {
                        ++line;
                        lineStart = i + 1;
                    }
                    cell += c;
                    ++i;
                }
                if (i < n && text[i] != ',' && text[i] != '\r' && text[i] != '\n')
                    return malformed(fileForMessages, line, static_cast<std::uint32_t>(i - lineStart + 1),
                                     "unexpected character after a closing quote");
            } else {
                while (i < n && text[i] != ',' && text[i] != '\r' && text[i] != '\n') {
                    if (text[i] == '\0')
                        return malformed(fileForMessages, line, static_cast<std::uint32_t>(i - lineStart + 1),
                                         "NUL byte in the file");
                    if (text[i] == '"')
                        return malformed(fileForMessages, line, static_cast<std::uint32_t>(i - lineStart + 1),
                                         "quote inside an unquoted field");
                    cell += text[i];
                    blank = false;
                    ++i;
                }
            }
            cells.push_back(std::move(cell));
            cell.clear();
            if (i < n && text[i] == ',') {
                blank = false;
                ++i;
                continue;
            }
            break;
        }
        // End of record: a line end or the end of the text.
        if (i < n) {
            if (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n')
                ++i;
            ++i;
            ++line;
            lineStart = i;
        }
        if (blank)
            continue;
        records.push_back(std::move(cells));
        lines.push_back(recordLine);
    }

    if (records.empty())
        return makeError("csv.empty", SourceLocation { fileForMessages, std::nullopt, 0, 0 },
                         "the file holds no CSV header");
    table.header = std::move(records.front());
    table.rows.reserve(records.size() - 1);
    for (std::size_t r = 1; r < records.size(); ++r)
        table.rows.push_back(CsvRow { std::move(records[r]), lines[r] });
    return table;
}

Result<CsvTable> readCsv(const std::filesystem::path& path)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    return parseCsvText(*text, path.string());
}

std::optional<Diagnostic> createCsv(const std::filesystem::path& path, const std::vector<std::string>& header)
{
    // The file appears with its whole header or not at all, and never in place of anything (util/outputfile.h).
    std::string text(kUtf8Bom);
    text += csvLine(header);
    const auto failure = writeFileAtomically(path, text, ReplaceMode::Never);
    if (!failure)
        return std::nullopt;
    if (failure->nameTaken)
        return makeError("csv.exists", fileLocation(path),
                         path.string() + " already exists; refusing to overwrite it");
    return makeError("io.write", fileLocation(path), failure->message);
}

std::optional<Diagnostic> appendCsv(const std::filesystem::path& path, std::string_view lines)
{
    // Whole rows or nothing: a full disk cuts the file back to its last complete row, which -csv_path resumes.
    if (auto failure = appendToOutput(path, lines))
        return makeError("io.write", fileLocation(path), *failure);
    return std::nullopt;
}

} // namespace probescope::runut
