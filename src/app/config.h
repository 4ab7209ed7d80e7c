#pragma once
// Options for rtm's commands: an INI configuration file (--config) whose
// "[section] key = value" lines are the options "section.key", with the same options
// on the command line taking precedence. Boost.Program_options does the parsing.
// Paths are relative to the working directory.
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

namespace rtm::app {

namespace po = boost::program_options;

// Parses argv (argv[0] the command's name) and the --config file into `vm`. Returns
// false when --help was asked for (the help text, with `usage` on top, is printed).
// `others` are the options of rtm's other commands: one INI file may hold a modelling
// and a migration job, so the file's options found there are skipped (a debug message
// says so); on the command line they are refused. Unknown options, bare arguments and
// bad values throw rtm::UsageError naming the option (and the file); a configuration
// file that cannot be read, a folder or not text, rtm::Error. `desc` gains the general
// options (--help, --config).
bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& desc,
                   const po::options_description& others, po::variables_map& vm);

// The value of an option that names an input file, shown as `shown` in --help:
// input_files finds every option made with one, so that a new input cannot be left out
// of the checks that no output replaces an input, nor of a migration job's fingerprint.
template <class T>
class InputFileValue : public po::typed_value<T> {
public:
    explicit InputFileValue(const char* shown) : po::typed_value<T>(nullptr) { this->value_name(shown); }
};
inline po::typed_value<std::string>* input_file(const char* shown = "FILE") {
    return new InputFileValue<std::string>(shown);
}
inline po::typed_value<std::vector<std::string>>* input_file_list() {
    return new InputFileValue<std::vector<std::string>>("FILE...");
}

// Every value given to the options made with input_file or input_file_list, as given
// (an empty one included): each option's name and value.
std::vector<std::pair<std::string, std::string>> input_values(const po::options_description& desc,
                                                              const po::variables_map& vm);

// The input files given (options made with input_file or input_file_list): each option's
// name and path, for every path that names a file (the anisotropy parameters may be
// numbers; a path that names nothing fails where it is read).
std::vector<std::pair<std::string, std::string>> input_files(const po::options_description& desc,
                                                             const po::variables_map& vm);

// All the options of each job command (defined beside the command).
po::options_description model_command_options();
po::options_description migrate_command_options();

}  // namespace rtm::app
