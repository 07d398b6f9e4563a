import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The command leaves the terminal as it found it, refuses passphrases it cannot trust or would
/// have to cut (vault-format issue, finding 10).
@Suite("Process hygiene: terminal state, passphrase files")
struct ProcessHygieneTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var run: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath) }

    @Test("Ctrl-C at a passphrase prompt leaves the terminal with echo on")
    func interruptRestoresEcho() throws {
        let passphrase = directory.file("pw", "correct horse")
        #expect(try run(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        let environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_KERNEL_KEYRING": "off", "KEYCHAIN_PATH": vaultPath]
        var echo = false
        let interrupted = try Subprocess.runOnTerminal(
            KeychainExecutable.path, ["unlock"], environment: environment,
            prompt: "passphrase", answer: "\u{03}"
        ) { master in
            var state = termios()
            if tcgetattr(master, &state) == 0 { echo = state.c_lflag & tcflag_t(ECHO) != 0 }
        }
        #expect(interrupted.result.status == 128 + SIGINT, "ended by the interrupt: \(interrupted.result.status) \(interrupted.result.stderr)")
        #expect(echo, "echo is back on after Ctrl-C")
    }

    @Test("the command keeps keys out of core dumps: its core-size limit is zero, soft and hard, from its start")
    func commandIsNotDumpable() throws {
        let (pid, stdin) = try Subprocess.launch(
            KeychainExecutable.path, ["set", "--identifier", "Druidia", "Skroob"],
            environment: ["KEYCHAIN_PATH": vaultPath, "HOME": directory.path, "KEYCHAIN_KERNEL_KEYRING": "off"], errorFile: directory.path + "/set.stderr")
        // While it waits for the secret on standard input: by then it has set its limits.
        waitUntilReadingStandardInput(pid)
        let limits = String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/limits")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        close(stdin)
        _ = Subprocess.wait(for: pid)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }?.split(separator: " ", omittingEmptySubsequences: true)
        // Soft and hard limits both zero: the hard one is what the command lowered itself.
        #expect(core?.dropFirst(4).prefix(2) == ["0", "0"], "\(core ?? [])")
    }

    @Test("the command reads nothing from OpenSSL's configuration: a broken OPENSSL_CONF does not stop a get")
    func opensslConfigurationNotRead() throws {
        #expect(try run(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        // A configuration that makes OpenSSL's default initialisation fail: it asks for a
        // provider that does not exist, with diagnostics on.
        let broken = directory.file(
            "broken.cnf", "config_diagnostics = 1\nopenssl_conf = init\n[init]\nproviders = providers\n[providers]\nabsent = absent\n[absent]\nactivate = 1\n")
        let result = try run(["get", "--identifier", "Druidia", "Skroob"], environment: ["OPENSSL_CONF": broken])
        #expect(result.status == 0 && result.output.hasPrefix("12345"), "\(result.status) \(result.stderr)")
    }

    @Test("where OpenSSL reads a broken configuration (sync keeps it, for TLS), the vault says OpenSSL has no algorithms, not that it is corrupted")
    func brokenOpenSSLIsNotCorruption() throws {
        #expect(try run(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        let broken = directory.file(
            "broken.cnf", "config_diagnostics = 1\nopenssl_conf = init\n[init]\nproviders = providers\n[providers]\nabsent = absent\n[absent]\nactivate = 1\n")
        let before = FileManager.default.contents(atPath: vaultPath)
        let result = try run(["sync", "status"], environment: ["OPENSSL_CONF": broken])
        #expect(result.status == 4 && result.stderr.contains("OpenSSL has no SHA-256") && !result.stderr.contains("corrupted"), "\(result.status) \(result.stderr)")
        #expect(FileManager.default.contents(atPath: vaultPath) == before, "the vault is untouched")
        #expect(try run(["get", "--identifier", "Druidia", "Skroob"]).output.hasPrefix("12345"))
    }

    @Test("a passphrase file others can read is refused, with the reason and the fix")
    func loosePassphraseFileRefused() throws {
        let passphrase = directory.file("pw", "correct horse")
        #expect(try run(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        chmod(passphrase, 0o644)
        let result = try run(["unlock"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase])
        #expect(result.status == 4 && result.stderr.contains("other users can read") && result.stderr.contains("chmod 600"), "\(result.stderr)")
    }

    @Test("a passphrase over 4096 bytes is refused, never cut to its first 4096")
    func overlongPassphraseRefused() throws {
        let long = String(repeating: "p", count: 4096) + "tail"
        let file = directory.file("long", long)
        let set = try run(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": file])
        #expect(set.status == 4 && set.stderr.contains("longer than 4096 bytes"), "\(set.stderr)")
        let cut = directory.file("cut", String(repeating: "p", count: 4096))
        #expect(try run(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": cut]).status == 0, "4096 bytes exactly are fine")
        let unlock = try run(["unlock"], environment: ["KEYCHAIN_PASSPHRASE_FILE": file])
        #expect(unlock.status == 4 && unlock.stderr.contains("longer than 4096 bytes"), "the cut passphrase does not open it: \(unlock.stderr)")
    }

    /// Waits (without a deadline a loaded machine could miss) until `pid` is blocked in a read of
    /// its standard input, as `/proc/<pid>/syscall` shows it, or has ended (a zombie included).
    private func waitUntilReadingStandardInput(_ pid: pid_t) {
        #if arch(arm64)
            let readCall = "63 0x0 "
        #else
            let readCall = "0 0x0 "
        #endif
        func ended() -> Bool {
            let stat = String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/stat")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            return stat.isEmpty || stat.contains(") Z ")
        }
        while !ended() {
            let call = String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/syscall")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            if call.hasPrefix(readCall) { return }
            usleep(2_000)
        }
    }
}
