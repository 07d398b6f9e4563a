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

        /// A program run as the user in a later login shell of `session`: the environment a
        /// login program gives it (PATH, HOME, USER and what the PAM stack set), nothing else.
        func inSession(_ session: [String: String], _ program: String, _ arguments: [String], input: String = "", environment extra: [String: String] = [:])
            throws -> CommandResult
        {
            let environment = ["PATH": "/usr/bin:/bin", "HOME": home, "USER": name].merging(session) { $1 }.merging(extra) { $1 }
            return try Subprocess.run(
                "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--", program] + arguments, environment: environment,
                input: Data(input.utf8))
        }

        /// Logs the user in as a login program does (authenticate, account, credentials, open
        /// the session) through `Fixtures/pam_login.c`, built here against libpam; the
        /// environment the PAM stack gives the session's shells.
        func login(password: String) throws -> [String: String] {
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/pam_login.c").path
            let program = helperDirectory.path + "/pam_login"
            let built = try Subprocess.run(
                "/usr/bin/cc", ["-O2", "-Wall", "-Werror", "-o", program, source, "-lpam"], environment: ["PATH": "/usr/bin:/bin", "TMPDIR": helperDirectory.path])
            guard built.status == 0 else { throw LoginRefused(reason: "pam_login.c did not build: \(built.stderr)") }
            let result = try Subprocess.run(program, [service, name], environment: ["PATH": "/usr/bin:/bin"], input: Data((password + "\n").utf8))
            guard result.status == 0 else { throw LoginRefused(reason: result.stderr) }
            var environment: [String: String] = [:]
            for line in result.output.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { environment[String(parts[0])] = String(parts[1]) }
            }
            return environment
        }

        var helper: String { helperDirectory.path + "/keychain" }

        struct LoginRefused: Error, CustomStringConvertible {
            let reason: String
            var description: String { "the login failed: \(reason)" }
        }
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

    /// Why the later-shell clients cannot run here: git's libsecret helper, Python keyring
    /// (`KEYCHAIN_TEST_PYTHON`, the interpreter of a virtual environment that has it, as
    /// `.ci/run` makes), and libpam's headers for the login program.
    static let laterShellClientsMissing: String? = {
        if let reason = GitHelper.unavailableReason { return reason }
        guard let python = ProcessInfo.processInfo.environment["KEYCHAIN_TEST_PYTHON"], FileManager.default.isExecutableFile(atPath: python) else {
            return "KEYCHAIN_TEST_PYTHON is not set to a Python with keyring installed (.ci/run makes one)"
        }
        guard FileManager.default.fileExists(atPath: "/usr/include/security/pam_appl.h") else { return "libpam's headers are missing (apt-get install libpam0g-dev)" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { return "/usr/bin/openssl is missing (apt-get install openssl)" }
        return nil
    }()

    @Test(
        "after the login, git push over HTTPS in a later shell takes the password an earlier push stored, and Python keyring reads and writes the same vault, with no setup of their own",
        .enabled(if: laterShellClientsMissing == nil, "\(laterShellClientsMissing ?? "")"))
    func gitAndPythonKeyringInALaterShell() throws {
        let fixture = try LoginFixture(password: "Druidia-12345")
        let python = try #require(ProcessInfo.processInfo.environment["KEYCHAIN_TEST_PYTHON"])
        OrdinaryUser.letTraverse(to: python)
        // The login, as sshd makes it: what the later shells get is the PAM stack's environment.
        let session = try fixture.login(password: "Druidia-12345")
        #expect(session["DBUS_SESSION_BUS_ADDRESS"] == "unix:path=\(fixture.runtime)/bus", "\(session)")

        // A forge on loopback: git's own HTTP backend behind Basic authentication, over TLS.
        let place = fixture.helperDirectory.path
        let root = ["PATH": "/usr/bin:/bin", "HOME": place]
        #expect(try Subprocess.run("/usr/bin/git", ["init", "-q", "--bare", place + "/forge/project.git"], environment: root).status == 0)
        let certificate = try Subprocess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", place + "/forge.key", "-out", place + "/forge.pem",
            ], environment: root)
        #expect(certificate.status == 0, "\(certificate.stderr)")
        chmod(place + "/forge.pem", 0o644)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/git_https_server.py").path
        let server = try Subprocess.launchReadingOutput(
            "/usr/bin/python3", [script, place + "/forge.pem", place + "/forge.key", place + "/forge", "ci", "tok-123"], environment: root)
        defer {
            kill(server.pid, SIGTERM)
            _ = Subprocess.wait(for: server.pid)
            close(server.stdout)
        }
        let port = try #require(Subprocess.readLine(server.stdout), "the forge did not start")
        let remote = "https://ci@127.0.0.1:\(port)/project.git"

        // The user's git: its libsecret helper, and the forge's certificate (trust, not credentials).
        let helper = try GitHelper.build(in: place)
        let git = ["-c", "credential.helper=\(helper)", "-c", "http.sslCAInfo=\(place)/forge.pem", "-c", "user.name=ci", "-c", "user.email=ci@example.org"]
        let work = fixture.home + "/work"
        #expect(try fixture.inSession(session, "/usr/bin/git", ["init", "-q", "-b", "main", work]).status == 0)
        func commitAndPush(_ file: String, environment: [String: String]) throws -> CommandResult {
            try (file + "\n").write(toFile: work + "/" + file, atomically: true, encoding: .utf8)
            chown(work + "/" + file, fixture.uid, fixture.gid)
            _ = try fixture.inSession(session, "/usr/bin/git", ["-C", work] + git + ["add", file])
            _ = try fixture.inSession(session, "/usr/bin/git", ["-C", work] + git + ["commit", "-q", "-m", file])
            return try fixture.inSession(session, "/usr/bin/git", ["-C", work] + git + ["push", "-q", remote, "main"], environment: environment)
        }

        // The first push asks for the password once (GIT_ASKPASS plays the person typing it);
        // git hands it to its helper, which stores it in the vault through the session's bus.
        let askpass = place + "/askpass"
        try "#!/bin/sh\necho tok-123\n".write(toFile: askpass, atomically: true, encoding: .utf8)
        chmod(askpass, 0o755)
        let first = try commitAndPush("one", environment: ["GIT_ASKPASS": askpass])
        #expect(first.status == 0, "\(first.stderr)")
        let search = try fixture.inSession(session, "/usr/bin/secret-tool", ["search", "server", "127.0.0.1"])
        #expect(search.output.contains("secret = tok-123"), "stored in the vault: \(search.stderr) \(first.stderr)")

        // A later shell: nothing to ask with, and the push goes through on the stored password.
        let later = try commitAndPush("two", environment: ["GIT_TERMINAL_PROMPT": "0"])
        #expect(later.status == 0, "\(later.stderr)")
        let pushed = try Subprocess.run("/usr/bin/git", ["-C", place + "/forge/project.git", "log", "--format=%s", "main"], environment: root)
        #expect(pushed.output == "two\none\n", "\(pushed.output) \(pushed.stderr)")

        // Python keyring, in another later shell, finds the same vault on the same bus.
        #expect(
            try fixture.inSession(session, "/usr/bin/secret-tool", ["store", "--label=api", "service", "api.example.org", "username", "bob"], input: "from-secret-tool").status == 0
        )
        let keyring = try fixture.inSession(
            session,
            python,
            ["-c", "import keyring; print(keyring.get_password('api.example.org', 'bob')); keyring.set_password('api.example.org', 'carol', 'from-python')"])
        #expect(keyring.status == 0 && keyring.output == "from-secret-tool\n", "\(keyring.output) \(keyring.stderr)")
        #expect(try fixture.inSession(session, "/usr/bin/secret-tool", ["lookup", "service", "api.example.org", "username", "carol"]).output == "from-python")
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
