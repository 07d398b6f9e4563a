import Foundation

/// Building `git-credential-libsecret` from `/usr/share/doc/git/contrib/credential/libsecret/`.
public enum GitHelper {
    public static let source = "/usr/share/doc/git/contrib/credential/libsecret/git-credential-libsecret.c"

    public static let unavailableReason: String? = {
        for file in ["/usr/bin/git", "/usr/bin/gcc", "/usr/bin/pkg-config", source] where !FileManager.default.fileExists(atPath: file) {
            return "\(file) is missing (apt-get install git gcc pkg-config libsecret-1-dev)"
        }
        guard (try? Subprocess.run("/usr/bin/pkg-config", ["--exists", "libsecret-1"], environment: ["PATH": "/usr/bin:/bin"]))?.status == 0 else {
            return "libsecret-1's headers are missing (apt-get install libsecret-1-dev)"
        }
        return nil
    }()

    /// Compiles the helper into `directory`; its path.
    public static func build(in directory: String) throws -> String {
        let flags = try Subprocess.run("/usr/bin/pkg-config", ["--cflags", "--libs", "libsecret-1", "glib-2.0"], environment: ["PATH": "/usr/bin:/bin"])
        let output = directory + "/git-credential-libsecret"
        let arguments = ["-O1", "-o", output, source] + flags.output.split(whereSeparator: \.isWhitespace).map(String.init)
        let built = try Subprocess.run("/usr/bin/gcc", arguments, environment: ["PATH": "/usr/bin:/bin", "TMPDIR": directory])
        guard built.status == 0 else { throw POSIXError(.ENOEXEC) }
        return output
    }
}
