#pragma once
// rtm's one exception type. Messages follow one pattern so a user can act on them:
// "<where>: <what is wrong>. <how to fix it>", where <where> names the file, header
// field or option at fault.
#include <new>
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

// A command line (or configuration file) that rtm cannot take as it is: an unknown
// option, a value that does not parse, a value missing. rtm exits 2 on it (1 on any
// other error), as its usage says.
class UsageError : public Error {
public:
    using Error::Error;
};

// "<where>: <what>. <fix>"
inline std::string error_text(const std::string& where, const std::string& what, const std::string& fix) {
    return where + ": " + what + (fix.empty() ? "" : ". " + fix);
}

// Throws rtm::Error("<where>: <what>. <fix>").
[[noreturn]] inline void fail(const std::string& where, const std::string& what,
                              const std::string& fix = "") {
    throw Error(error_text(where, what, fix));
}

// Throws rtm::UsageError("<where>: <what>. <fix>").
[[noreturn]] inline void fail_usage(const std::string& where, const std::string& what,
                                    const std::string& fix = "") {
    throw UsageError(error_text(where, what, fix));
}

// What a failure says in a message: its text, except for an allocation the system
// refused, whose text (std::bad_alloc) names neither the cause nor a fix.
inline std::string failure_text(const std::exception& e) {
    if (dynamic_cast<const std::bad_alloc*>(&e))
        return "out of host memory: an allocation was refused (" + std::string(e.what()) +
               "). The plan (--dry-run) lists what a shot holds: make its largest part smaller, or run fewer ranks "
               "on this node, or use a node with more memory";
    return e.what();
}

}  // namespace rtm
