// manpage_from_help: writes a program's man page from its own --help text, so the
// man page and --help never say different things (packaging/CMakeLists.txt runs it
// at build time on hloscope, hloscope-cli and hloscope-gpu-runner).
//
//   manpage_from_help --name NAME --summary TEXT --version V --date D --output FILE
//                     [--see-also PAGE(1),...] -- PROGRAM [ARGS...]
//
// Runs PROGRAM ARGS (e.g. `hloscope --help`) and converts what it prints:
//   * "Usage: PROG ..." (and the aligned lines that continue it) -> SYNOPSIS;
//   * an unindented line ending in ':' ("Options:", "Commands:") -> a section;
//   * unindented text -> filled paragraphs (the first section is DESCRIPTION);
//   * indented items -> tagged paragraphs: "  --opt <V>   text" (tag and text on one
//     line, as Qt's QCommandLineParser prints them) or "  command ARGS" followed by
//     more indented lines (synopsis lines starting with '[' join the tag; lines
//     "--flag   text" inside become a nested list).
// Exit status: 0, or 1 with a message when the program cannot be run or prints nothing.
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Options {
    std::string name, summary, version, date, output, seeAlso;
    std::vector<std::string> command;
};

int usageError(const std::string& message) {
    std::cerr << "manpage_from_help: " << message
              << "\nusage: manpage_from_help --name NAME --summary TEXT --version V --date D"
                 " --output FILE [--see-also PAGE(1),...] -- PROGRAM [ARGS...]\n";
    return 2;
}

// Runs the command and returns its standard output (standard error is discarded:
// Qt prints platform notes there).
bool runCommand(const std::vector<std::string>& command, std::string& out) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (FILE* devnull = std::fopen("/dev/null", "w")) dup2(fileno(devnull), STDERR_FILENO);
        std::vector<char*> argv;
        for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    close(fds[1]);
    char buffer[4096];
    ssize_t n;
    while ((n = read(fds[0], buffer, sizeof buffer)) > 0)
        out.append(buffer, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

size_t indentOf(const std::string& line) {
    size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    return i;
}

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(' ');
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// Escapes text for roff: backslashes, minus signs (so they print as ASCII hyphens
// that can be searched and copied), and a leading control character.
std::string roff(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\\')
            out += "\\e";
        else if (c == '-')
            out += "\\-";
        else
            out += c;
    }
    if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
    return out;
}

// A tag: option names (words starting with '-') and the first word of a command
// in bold, the rest as written.
std::string formatTag(const std::string& tag, bool boldFirstWord) {
    std::string out;
    std::istringstream words(tag);
    std::string word;
    bool first = true;
    while (words >> word) {
        if (!out.empty()) out += ' ';
        std::string suffix;
        if (word.size() > 1 && word.back() == ',') {
            suffix = ",";
            word.pop_back();
        }
        if ((word[0] == '-' && word.size() > 1) || (first && boldFirstWord))
            out += "\\fB" + roff(word) + "\\fR" + suffix;
        else
            out += roff(word) + suffix;
        first = false;
    }
    if (!out.empty() && out[0] == '.') out = "\\&" + out;
    return out;
}

// "tag   text": splits at the first run of two or more spaces after the tag.
bool splitTag(const std::string& s, std::string& tag, std::string& text) {
    const size_t gap = s.find("  ");
    if (gap == std::string::npos) return false;
    tag = trim(s.substr(0, gap));
    text = trim(s.substr(gap));
    return !tag.empty() && !text.empty();
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

bool isHeading(const std::string& line) {
    if (line.empty() || line[0] == ' ' || line.back() != ':') return false;
    for (char c : line.substr(0, line.size() - 1))
        if (!std::isalpha(static_cast<unsigned char>(c)) && c != ' ') return false;
    return true;
}

bool startsWithUsage(const std::string& line) {
    return line.size() > 6 && upper(line.substr(0, 6)) == "USAGE:";
}

class Writer {
public:
    explicit Writer(std::ostream& out) : m_out(out) {}

    void section(const std::string& title) {
        m_out << ".SH " << roff(upper(title)) << "\n";
        m_inText = false;
    }
    void text(const std::string& line) {
        if (!m_inText && m_afterItems) m_out << ".PP\n";
        m_out << roff(trim(line)) << "\n";
        m_inText = true;
        m_afterItems = false;
    }
    void paragraphBreak() {
        if (m_inText) m_out << ".PP\n";
        m_inText = false;
    }
    // One indented item: its lines with the common indent removed.
    void item(const std::vector<std::string>& lines) {
        std::string tag, inlineText;
        const bool optionStyle = splitTag(lines[0], tag, inlineText);
        if (!optionStyle) tag = trim(lines[0]);
        size_t i = 1;
        if (!optionStyle)
            while (i < lines.size() && trim(lines[i]).starts_with("["))
                tag += " " + trim(lines[i++]);
        m_out << ".TP\n" << formatTag(tag, !optionStyle) << "\n";
        if (!inlineText.empty()) m_out << roff(inlineText) << "\n";
        // The rest: text, and "--flag   text" lines as a nested list.
        bool nested = false;
        for (; i < lines.size(); ++i) {
            const std::string line = trim(lines[i]);
            std::string subTag, subText;
            if (!optionStyle && line.starts_with("-") && splitTag(line, subTag, subText)) {
                if (!nested) m_out << ".RS\n";
                nested = true;
                m_out << ".TP\n" << formatTag(subTag, false) << "\n" << roff(subText) << "\n";
                continue;
            }
            if (nested) {
                m_out << ".RE\n";
                nested = false;
            }
            m_out << roff(line) << "\n";
        }
        if (nested) m_out << ".RE\n";
        m_inText = false;
        m_afterItems = true;
    }

private:
    std::ostream& m_out;
    bool m_inText = false;
    bool m_afterItems = false;
};

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
        std::string expanded;
        for (char c : line) {
            if (c == '\t')
                expanded.append(8 - expanded.size() % 8, ' ');
            else
                expanded += c;
        }
        lines.push_back(expanded);
    }
    return lines;
}

void writePage(const Options& o, const std::vector<std::string>& lines, std::ostream& out) {
    out << ".\\\" Generated by packaging/man/manpage_from_help from `" << o.name
        << " --help`; edit the program's help text, not this file.\n";
    out << ".TH \"" << roff(upper(o.name)) << "\" \"1\" \"" << o.date << "\" \"" << roff(o.name)
        << " " << o.version << "\" \"User Commands\"\n";
    out << ".nh\n.ad l\n";
    out << ".SH NAME\n" << roff(o.name) << " \\- " << roff(o.summary) << "\n";

    size_t i = 0;
    while (i < lines.size() && lines[i].empty()) ++i;
    Writer writer(out);
    // Usage: the first line and the lines aligned under it.
    if (i < lines.size() && startsWithUsage(lines[i])) {
        out << ".SH SYNOPSIS\n.nf\n";
        const size_t prefix = 6 + indentOf(lines[i].substr(6));
        std::vector<std::string> usage{lines[i].substr(prefix)};
        for (++i; i < lines.size() && !lines[i].empty() && indentOf(lines[i]) > 0; ++i)
            usage.push_back(lines[i].substr(std::min(prefix, indentOf(lines[i]))));
        for (const std::string& u : usage) {
            // The program as invoked (a build path) prints as its name.
            std::string rest = u;
            if (!rest.empty() && rest[0] != ' ') {
                const size_t end = rest.find(' ');
                const std::string program = rest.substr(0, end);
                const size_t slash = program.rfind('/');
                if (program.substr(slash == std::string::npos ? 0 : slash + 1) == o.name) {
                    out << "\\fB" << roff(o.name) << "\\fR"
                        << (end == std::string::npos ? "" : roff(rest.substr(end))) << "\n";
                    continue;
                }
            }
            out << roff(rest) << "\n";
        }
        out << ".fi\n";
    }
    bool inSection = false;
    while (i < lines.size()) {
        const std::string& line = lines[i];
        if (line.empty()) {
            writer.paragraphBreak();
            ++i;
            continue;
        }
        if (isHeading(line)) {
            writer.section(line.substr(0, line.size() - 1));
            inSection = true;
            ++i;
            continue;
        }
        if (!inSection) {
            writer.section("Description");
            inSection = true;
        }
        const size_t indent = indentOf(line);
        if (indent == 0) {
            writer.text(line);
            ++i;
            continue;
        }
        // An item: this line and the more indented lines below it.
        std::vector<std::string> item{line.substr(indent)};
        for (++i; i < lines.size() && !lines[i].empty() && indentOf(lines[i]) > indent; ++i)
            item.push_back(lines[i].substr(indent));
        writer.item(item);
    }
    if (!o.seeAlso.empty()) {
        out << ".SH SEE ALSO\n";
        std::istringstream pages(o.seeAlso);
        std::string page;
        bool first = true;
        while (std::getline(pages, page, ',')) {
            const size_t paren = page.find('(');
            if (!first) out << ",\n";
            out << "\\fB" << roff(page.substr(0, paren)) << "\\fR"
                << (paren == std::string::npos ? "" : page.substr(paren));
            first = false;
        }
        out << "\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (i + 1 >= argc) return usageError("missing value for " + arg);
        const std::string value = argv[++i];
        if (arg == "--name")
            o.name = value;
        else if (arg == "--summary")
            o.summary = value;
        else if (arg == "--version")
            o.version = value;
        else if (arg == "--date")
            o.date = value;
        else if (arg == "--output")
            o.output = value;
        else if (arg == "--see-also")
            o.seeAlso = value;
        else
            return usageError("unknown option " + arg);
    }
    for (; i < argc; ++i) o.command.push_back(argv[i]);
    if (o.name.empty() || o.summary.empty() || o.output.empty() || o.command.empty())
        return usageError("--name, --summary, --output and a command are required");

    std::string help;
    if (!runCommand(o.command, help) || help.find_first_not_of(" \n") == std::string::npos) {
        std::cerr << "manpage_from_help: `" << o.command[0] << "` failed or printed nothing\n";
        return 1;
    }
    std::ostringstream page;
    writePage(o, splitLines(help), page);
    std::ofstream out(o.output, std::ios::binary | std::ios::trunc);
    out << page.str();
    if (!out) {
        std::cerr << "manpage_from_help: cannot write " << o.output << "\n";
        return 1;
    }
    return 0;
}
