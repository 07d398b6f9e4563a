import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the login tests need: root (to make a user and a PAM service), the tools, the module.
enum LoginTestNeeds {
    static let unavailableReason: String? = {
        if getuid() != 0 { return "not root: creating a user and a PAM service needs root" }
        for tool in ["/usr/bin/pamtester", "/usr/sbin/useradd", "/usr/sbin/chpasswd", "/usr/bin/setpriv", "/usr/bin/dbus-daemon", "/usr/bin/secret-tool", "/usr/bin/cc"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (apt-get install pamtester passwd util-linux dbus libsecret-tools gcc)"
        }
        return nil
    }()

    /// Builds the PAM module as docs/login.md does (`cc -shared`, nothing but libc) into
    /// `directory`; its path.
    static func buildModule(in directory: String) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/CPAMKeychain").standardized.path
        let output = directory + "/pam_keychain.so"
        let built = try Subprocess.run(
            "/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-I", source + "/include", "-o", output, source + "/pam_keychain.c"],
            environment: ["PATH": "/usr/bin:/bin", "TMPDIR": directory])
        guard built.status == 0 else { throw POSIXError(.ENOEXEC) }
        return output
    }

    /// The PAM lines docs/login.md gives for Debian's `common-*` files, verbatim: the block
    /// that starts with `# /etc/pam.d/common-auth`.
    static func documentedStack() throws -> String {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/login.md").standardized.path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let start = text.range(of: "```\n# /etc/pam.d/common-auth\n"), let end = text.range(of: "\n```", range: start.upperBound..<text.endIndex) else {
            throw POSIXError(.ENOENT)
        }
        return String(text[text.index(start.lowerBound, offsetBy: 4)..<end.lowerBound]) + "\n"
    }
}

/// The login through PAM, with a real user and a real password: pamtester drives a private PAM
/// service (the stack docs/login.md gives, verbatim) as sshd or login would.
@Suite("Login integration through PAM", .serialized, .enabled(if: LoginTestNeeds.unavailableReason == nil, "\(LoginTestNeeds.unavailableReason ?? "")"))
struct LoginIntegrationTests {
    /// A user of the test's own with a real password, a PAM service naming our module, and
    /// everything removed afterwards (the user's processes by their ids, its runtime directory).
    final class LoginFixture {
        let name = "kc\(getpid() % 100_000)\(Int.random(in: 100...999))"
        let service: String
        let uid: uid_t
        let gid: gid_t
        let home: String
        let helperDirectory = TemporaryDirectory()
        var runtime: String { "/run/user/\(uid)" }

        /// `stack`: the service's lines, with `pam_keychain.so /usr/local/bin/keychain` as in
        /// the docs; docs/login.md's own by default.
        init(password: String, stack: String? = nil) throws {
            service = "keychain-test-" + name
            #expect(try Subprocess.run("/usr/sbin/useradd", ["-m", "-s", "/bin/sh", name], environment: ["PATH": "/usr/sbin:/usr/bin:/bin"]).status == 0)
            let set = try Subprocess.run("/usr/sbin/chpasswd", [], environment: ["PATH": "/usr/sbin:/usr/bin:/bin"], input: Data("\(name):\(password)\n".utf8))
            #expect(set.status == 0, "\(set.stderr)")
            guard let entry = getpwnam(name) else { throw POSIXError(.ENOENT) }
            uid = entry.pointee.pw_uid
            gid = entry.pointee.pw_gid
            home = String(cString: entry.pointee.pw_dir)
            // The module runs only a root-owned helper no one else may write: a copy the user can reach.
            chmod(helperDirectory.path, 0o755)
            OrdinaryUser.letTraverse(to: helperDirectory.path)
            let helper = helperDirectory.path + "/keychain"
            // Copied by cp, not in this process: a program another test starts meanwhile would
            // inherit the copy's open descriptor, and the copy would not run (ETXTBSY).
            #expect(try Subprocess.run("/bin/cp", [KeychainExecutable.path, helper], environment: ["PATH": "/usr/bin:/bin"]).status == 0)
            chmod(helper, 0o755)
            let module = try LoginTestNeeds.buildModule(in: helperDirectory.path)
            let documented = try stack ?? LoginTestNeeds.documentedStack()
            #expect(documented.contains("pam_keychain.so /usr/local/bin/keychain"))
            let lines =
                "account  required  pam_unix.so\n" + documented.replacingOccurrences(of: "pam_keychain.so /usr/local/bin/keychain", with: "\(module) \(helper)")
            try lines.write(toFile: "/etc/pam.d/" + service, atomically: true, encoding: .utf8)
        }

        deinit {
            unlink("/etc/pam.d/" + service)
            // The bus and the activated serve: the test user's processes, by their ids.
            for pid in userProcesses() { kill(pid, SIGTERM) }
            for _ in 0..<100 where !userProcesses().isEmpty { usleep(20_000) }
            for pid in userProcesses() { kill(pid, SIGKILL) }
            _ = try? Subprocess.run("/usr/sbin/userdel", ["-r", name], environment: ["PATH": "/usr/sbin:/usr/bin:/bin"])
            try? FileManager.default.removeItem(atPath: runtime)
        }

        func userProcesses() -> [pid_t] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap { entry -> pid_t? in
                guard let pid = pid_t(entry), let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8) else { return nil }
                let line = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }
                let real = line?.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first
                return real.flatMap { uid_t($0) } == uid ? pid : nil
            }
        }

        /// pamtester with the conversation's answers on standard input.
        func pamtester(_ operations: [String], answers: [String] = []) throws -> CommandResult {
            try Subprocess.run(
                "/usr/bin/pamtester", [service, name] + operations, environment: ["PATH": "/usr/sbin:/usr/bin:/bin"],
                input: Data(answers.map { $0 + "\n" }.joined().utf8))
        }

        /// A program run as the user in a later login shell: its home and runtime directory,
        /// nothing about a bus.
        func asUser(_ program: String, _ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws -> CommandResult {
            let environment = ["PATH": "/usr/bin:/bin", "HOME": home, "USER": name, "XDG_RUNTIME_DIR": runtime].merging(extra) { $1 }
            return try Subprocess.run(
                "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--", program] + arguments, environment: environment,
                input: Data(input.utf8))
        }

        var helper: String { helperDirectory.path + "/keychain" }
    }

    @Test("the login password makes and unlocks the user's vault; the session's bus at $XDG_RUNTIME_DIR/bus serves it to a later shell with no setup")
    func loginOpensTheVaultForEveryShell() throws {
        let fixture = try LoginFixture(password: "Druidia-12345")
        let login = try fixture.pamtester(["authenticate", "open_session"], answers: ["Druidia-12345"])
        #expect(login.status == 0, "\(login.output) \(login.stderr)")
        var socket = stat()
        #expect(lstat(fixture.runtime + "/bus", &socket) == 0 && socket.st_uid == fixture.uid, "no bus of the user's at \(fixture.runtime)/bus")

        let status = try fixture.asUser(fixture.helper, ["status"])
        #expect(status.output.contains("passphrase:        set"), "\(status.output) \(status.stderr)")
        #expect(status.output.contains("locked:            no"), "unlocked by the login: \(status.output)")

        // A second shell: secret-tool finds the bus by XDG_RUNTIME_DIR alone, and the bus starts keychain serve.
        let stored = try fixture.asUser("/usr/bin/secret-tool", ["store", "--label=git", "protocol", "https", "host", "example.com"], input: "token-1")
        #expect(stored.status == 0, "\(stored.stderr)")
        let looked = try fixture.asUser("/usr/bin/secret-tool", ["lookup", "protocol", "https", "host", "example.com"])
        #expect(looked.output == "token-1", "\(looked.output) \(looked.stderr)")

        // A second login finds the bus that is there, and starts no other.
        #expect(try fixture.pamtester(["open_session"]).status == 0)
        #expect(try fixture.asUser("/usr/bin/secret-tool", ["lookup", "protocol", "https", "host", "example.com"]).output == "token-1")
    }

    @Test("authentication alone changes nothing: the vault is made and unlocked by the session step, which runs only after the password was accepted")
    func authenticationAloneMakesNoVault() throws {
        let fixture = try LoginFixture(password: "Druidia-12345")
        #expect(try fixture.pamtester(["authenticate"], answers: ["Druidia-12345"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: fixture.home + "/.local/share/keychain"), "the auth step ran the helper")
    }

    @Test("a failed password in a stack that still reaches the module (pam_unix jumping over it on success) runs no helper and makes no vault")
    func failedAuthenticationRunsNoHelper() throws {
        // The placement docs/login.md warns about: on a wrong password pam_unix falls through to the module.
        let misplaced = """
            auth     [success=1 default=ignore]  pam_unix.so nullok
            auth     optional                    pam_keychain.so /usr/local/bin/keychain
            auth     requisite                   pam_deny.so
            auth     required                    pam_permit.so
            session  optional                    pam_keychain.so /usr/local/bin/keychain

            """
        let fixture = try LoginFixture(password: "Druidia-12345", stack: misplaced)
        let attempt = try fixture.pamtester(["authenticate", "open_session"], answers: ["attackers-pick-9"])
        #expect(attempt.status != 0, "the wrong password was accepted: \(attempt.output)")
        #expect(!FileManager.default.fileExists(atPath: fixture.home + "/.local/share/keychain"), "a failed login ran the helper as the user")
        #expect(!FileManager.default.fileExists(atPath: fixture.home + "/.local/share/dbus-1"), "a failed login installed keychain serve")
    }

    @Test("the runtime directory the session step makes is 0700 and the user's whatever the login program's umask, and the bus starts in it")
    func runtimeDirectoryIgnoresTheUmask() throws {
        let fixture = try LoginFixture(password: "Druidia-12345")
        let login = try Subprocess.run(
            "/bin/sh", ["-c", "umask 0277; exec /usr/bin/pamtester \"$1\" \"$2\" open_session", "sh", fixture.service, fixture.name],
            environment: ["PATH": "/usr/sbin:/usr/bin:/bin"])
        #expect(login.status == 0, "\(login.output) \(login.stderr)")
        var info = stat()
        #expect(lstat(fixture.runtime, &info) == 0 && info.st_uid == fixture.uid && info.st_mode & 0o777 == 0o700, "mode \(String(info.st_mode & 0o777, radix: 8))")
        #expect(lstat(fixture.runtime + "/bus", &info) == 0, "no bus at \(fixture.runtime)/bus")
    }

    @Test("the module runs no helper another user could have changed: a helper writable by others leaves the user without a vault")
    func refusesAWritableHelper() throws {
        let fixture = try LoginFixture(password: "Druidia-12345")
        chmod(fixture.helper, 0o777)
        #expect(try fixture.pamtester(["authenticate", "open_session"], answers: ["Druidia-12345"]).status == 0, "the login goes on")
        #expect(!FileManager.default.fileExists(atPath: fixture.home + "/.local/share/keychain/default.keychain"), "a helper others may write was run")
        chmod(fixture.helper, 0o755)
        chmod(fixture.helperDirectory.path, 0o777)
        #expect(try fixture.pamtester(["authenticate", "open_session"], answers: ["Druidia-12345"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: fixture.home + "/.local/share/keychain/default.keychain"), "a helper in a directory others may write was run")
        chmod(fixture.helperDirectory.path, 0o755)
        #expect(try fixture.pamtester(["authenticate", "open_session"], answers: ["Druidia-12345"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: fixture.home + "/.local/share/keychain/default.keychain"), "the root-owned helper made no vault")
    }

    @Test("keychain bus, where PAM is not used: the user's bus at $XDG_RUNTIME_DIR/bus, once; refused in a directory that is not the user's alone")
    func busWithoutPAM() throws {
        let fixture = try LoginFixture(password: "Druidia-12345")
        mkdir("/run/user", 0o755)
        #expect(mkdir(fixture.runtime, 0o700) == 0 && chown(fixture.runtime, fixture.uid, fixture.gid) == 0)
        let started = try fixture.asUser(fixture.helper, ["bus"])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(try fixture.asUser(fixture.helper, ["bus"]).status == 0, "a bus answers: nothing to do")
        let buses = fixture.userProcesses().filter { pid in
            ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").hasPrefix("/usr/bin/dbus-daemon")
        }
        #expect(buses.count == 1, "\(buses.count) buses")
        let stored = try fixture.asUser("/usr/bin/dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.GetId"])
        #expect(stored.status == 0, "the bus is not found by XDG_RUNTIME_DIR alone: \(stored.stderr)")
        // Another user's directory, or one others may enter: no bus there.
        let foreign = try fixture.asUser(fixture.helper, ["bus"], environment: ["XDG_RUNTIME_DIR": "/root"])
        #expect(foreign.status == 4 && foreign.stderr.contains("not a directory of yours"), "\(foreign.stderr)")
        chmod(fixture.runtime, 0o755)
        let open = try fixture.asUser(fixture.helper, ["bus"])
        #expect(open.status == 4 && open.stderr.contains("only you can use"), "\(open.stderr)")
    }

    @Test("a wrong password at login leaves the vault as it was; a login password change changes the vault's passphrase with it, a refused one does not")
    func passwordChangeFollows() throws {
        let fixture = try LoginFixture(password: "old-Skroob-1")
        #expect(try fixture.pamtester(["authenticate", "open_session"], answers: ["old-Skroob-1"]).status == 0)
        #expect(try fixture.pamtester(["authenticate"], answers: ["wrong-one"]).status != 0)
        // A change pam_unix refuses (the wrong old password) moves nothing, the vault included.
        let refused = try fixture.pamtester(["chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)"], answers: ["not-Skroob-0", "other-Skroob-33", "other-Skroob-33"])
        #expect(refused.status != 0, "\(refused.output)")
        let changed = try fixture.pamtester(["chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)"], answers: ["old-Skroob-1", "new-Skroob-22", "new-Skroob-22"])
        #expect(changed.status == 0, "\(changed.output) \(changed.stderr)")
        #expect(try fixture.asUser(fixture.helper, ["lock"]).status == 0)
        let files = TemporaryDirectory()
        chmod(files.path, 0o755)
        let old = files.file("old", "old-Skroob-1"), new = files.file("new", "new-Skroob-22"), other = files.file("other", "other-Skroob-33")
        for file in [old, new, other] { chown(file, fixture.uid, fixture.gid) }
        #expect(try fixture.asUser(fixture.helper, ["unlock"], environment: ["KEYCHAIN_PASSPHRASE_FILE": other]).status == 3, "the refused change moved the vault")
        #expect(try fixture.asUser(fixture.helper, ["unlock"], environment: ["KEYCHAIN_PASSPHRASE_FILE": old]).status == 3, "the old password still opens the vault")
        let opened = try fixture.asUser(fixture.helper, ["unlock"], environment: ["KEYCHAIN_PASSPHRASE_FILE": new])
        #expect(opened.status == 0, "the new password does not open the vault: \(opened.stderr)")
    }
}
