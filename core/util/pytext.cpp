// SPDX-License-Identifier: Apache-2.0
#include "util/pytext.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string_view>

namespace probescope {

void appendPyFloatRepr(std::string& out, double v)
{
    if (std::isnan(v)) {
        out += "nan";
        return;
    }
    if (std::isinf(v)) {
        out += v > 0 ? "inf" : "-inf";
        return;
    }
    // std::to_chars gives the same shortest round-trip digits as Python's repr (both are exact shortest
    // representations); what differs is where Python switches to an exponent and how it pads.
    std::array<char, 40> sci {};
    const auto res = std::to_chars(sci.data(), sci.data() + sci.size(), v, std::chars_format::scientific);
    std::string_view text(sci.data(), static_cast<std::size_t>(res.ptr - sci.data()));
    if (text.front() == '-') {
        out += '-';
        text.remove_prefix(1);
    }
    const std::size_t e = text.find('e');
    std::array<char, 24> digitBuf {}; // at most 17 significant digits
    std::size_t count = 0;
    for (const char c : text.substr(0, e)) {
        if (c != '.')
            digitBuf[count++] = c;
    }
    const std::string_view digits(digitBuf.data(), count);
    int exponent = 0;
    const std::string_view expText = text.substr(e + 1);
    std::from_chars(expText.data() + (expText.front() == '+' ? 1 : 0), expText.data() + expText.size(), exponent);

    if (exponent < -4 || exponent >= 16) { // repr's 'r' format: scientific outside [1e-4, 1e16)
        out += digits.front();
        if (digits.size() > 1) {
            out += '.';
            out.append(digits.substr(1));
        }
        out += exponent < 0 ? "e-" : "e+";
        const int magnitude = exponent < 0 ? -exponent : exponent;
        if (magnitude < 10)
            out += '0';
        out += std::to_string(magnitude);
        return;
    }
    if (exponent < 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-exponent - 1), '0');
        out += digits;
        return;
    }
    const auto intDigits = static_cast<std::size_t>(exponent) + 1;
    if (digits.size() <= intDigits) {
        out += digits;
        out.append(intDigits - digits.size(), '0');
        out += ".0";
    } else {
        out += digits.substr(0, intDigits);
        out += '.';
        out += digits.substr(intDigits);
    }
}

std::string pyFloatRepr(double v)
{
    std::string out;
    appendPyFloatRepr(out, v);
    return out;
}

} // namespace probescope
