#pragma once
// rtm's one exception type. Messages follow one pattern so a user can act on them:
// "<where>: <what is wrong>. <how to fix it>", where <where> names the file, header
// field or option at fault.
#include <stdexcept>
#include <string>

namespace rtm {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// An error that another rank (the root) has already reported: this rank ends with it
// quietly (parallel::World::on_root).
class ReportedError : public Error {
public:
    using Error::Error;
};

// Throws rtm::Error("<where>: <what>. <fix>").
[[noreturn]] inline void fail(const std::string& where, const std::string& what,
                              const std::string& fix = "") {
    std::string msg = where + ": " + what;
    if (!fix.empty()) msg += ". " + fix;
    throw Error(msg);
}

}  // namespace rtm
