import Foundation
import KeychainTestSupport
import Testing
import Valet

import class KeychainCore.Vault

@Suite("The keychain command, run as a separate process")
struct CommandTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath("cli.keychain") }

    var run: KeychainCommandLine { KeychainCommandLine(home: directory.path, environment: ["KEYCHAIN_PATH": vaultPath]) }

    @Test("a secret set from standard input is printed back alone by get")
    func roundTrip() throws {
        #expect(try run(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        let got = try run(["get", "--identifier", "Druidia", "Skroob"])
        #expect(got.status == 0 && got.output == "12345\n" && got.stderr.isEmpty)
        #expect(try run(["set", "--identifier", "Druidia", "Skroob"], input: "67890\n").status == 0)
        #expect(try run(["get", "--identifier", "Druidia", "Skroob"]).output == "67890\n", "one trailing newline is dropped from text input")
        #expect(try run(["contains", "--identifier", "Druidia", "Skroob"]).status == 0)
        #expect(try run(["list", "--identifier", "Druidia"]).output == "Skroob\n")
        #expect(try run(["remove", "--identifier", "Druidia", "Skroob"]).status == 0)
        #expect(try run(["contains", "--identifier", "Druidia", "Skroob"]).status == 1)
    }

    @Test("binary secrets keep every byte with --binary")
    func binarySecrets() throws {
        let bytes = Data((0...255).map { UInt8($0) } + [10])
        let set = try KeychainExecutable.run(
            ["set", "--binary", "--service", "bin", "all-bytes"], input: bytes,
            environment: ["KEYCHAIN_PATH": vaultPath], home: directory.path)
        #expect(set.status == 0, "\(set.stderr)")
        let got = try run(["get", "--binary", "--service", "bin", "all-bytes"])
        #expect(got.stdout == bytes)
    }

    @Test("exit statuses: 0 found, 1 not found, 2 usage, 3 locked or wrong passphrase, 4 other error")
    func exitCodes() throws {
        #expect(try run(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        #expect(try run(["get", "--identifier", "Druidia", "Nobody"]).status == 1)
        #expect(try run(["remove", "--identifier", "Druidia", "Nobody"]).status == 1)
        #expect(try run(["get"]).status == 2)
        #expect(try run(["frobnicate"]).status == 2)
        #expect(try run(["get", "--identifier", "Druidia", "--bogus", "Skroob"]).status == 2)
        #expect(try run(["set", "--identifier", "Druidia", "Empty"], input: "").status == 2)
        #expect(try run(["get", "--identifier", "Druidia", "--accessibility", "sometimes", "Skroob"]).status == 2)
        let newPassphrase = directory.file("new", "correct horse")
        #expect(try run(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": newPassphrase]).status == 0)
        let locked = try run(["get", "--identifier", "Druidia", "Skroob"])
        #expect(locked.status == 3 && locked.stderr.contains("locked"))
        let wrong = try run(["get", "--identifier", "Druidia", "Skroob"], environment: ["KEYCHAIN_PASSPHRASE_FILE": directory.file("wrong", "nope")])
        #expect(wrong.status == 3 && wrong.stderr.contains("passphrase is incorrect"))
        let right = try run(["get", "--identifier", "Druidia", "Skroob"], environment: ["KEYCHAIN_PASSPHRASE_FILE": newPassphrase])
        #expect(right.status == 0 && right.output == "12345\n")
        let garbage = directory.vaultPath("garbage.keychain")
        _ = FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 1, count: 4096), attributes: [.posixPermissions: 0o600])
        let corrupted = try run(["get", "--vault", garbage, "--identifier", "Druidia", "Skroob"])
        #expect(corrupted.status == 4 && corrupted.stderr.contains("corrupted"))
    }

    @Test("--json prints the documented shapes, with no secret")
    func jsonShapes() throws {
        #expect(try run(["set", "--service", "api.example.com", "--label", "Deploy token", "deploy"], input: "tok-SECRET-1").status == 0)
        #expect(try run(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        let list = try run(["list", "--json", "--service", "api.example.com"])
        let items = try #require(try JSONSerialization.jsonObject(with: list.stdout) as? [[String: Any]])
        #expect(items.count == 1)
        #expect(items[0]["class"] as? String == "genp" && items[0]["service"] as? String == "api.example.com")
        #expect(items[0]["account"] as? String == "deploy" && items[0]["label"] as? String == "Deploy token")
        #expect(items[0]["accessibility"] as? String == "whenUnlocked" && items[0]["created"] is String)
        #expect(!list.output.contains("tok-SECRET-1"))
        let keys = try JSONSerialization.jsonObject(with: try run(["list", "--json", "--identifier", "Druidia"]).stdout) as? [String]
        #expect(keys == ["Skroob"])
        let status = try #require(try JSONSerialization.jsonObject(with: try run(["status", "--json"]).stdout) as? [String: Any])
        #expect(status["vault"] as? String == vaultPath && status["passphrase"] as? Bool == false && status["items"] as? Int == 2)
        #expect((status["availableClasses"] as? [String])?.contains("whenUnlocked") == true)
    }

    @Test("unlock with a passphrase file caches afterFirstUnlock keys for other processes; lock forgets them")
    func unlockAndLock() throws {
        let run = self.run.adding(environment: ["KEYCHAIN_KERNEL_KEYRING": "on"])
        let passphrase = directory.file("pw", "s3same")
        #expect(try run(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        #expect(
            try run(
                ["set", "--identifier", "Druidia", "--accessibility", "afterFirstUnlock", "token"], input: "afu",
                environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase]
            ).status == 0)
        #expect(try run(["lock"]).status == 0)
        #expect(try run(["get", "--identifier", "Druidia", "--accessibility", "afterFirstUnlock", "token"]).status == 3)
        #expect(try run(["unlock"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase]).status == 0)
        let cached = try run(["get", "--identifier", "Druidia", "--accessibility", "afterFirstUnlock", "token"])
        #expect(cached.status == 0 && cached.output == "afu\n", "\(cached.stderr)")
        #expect(try run(["lock"]).status == 0)
        #expect(try run(["get", "--identifier", "Druidia", "--accessibility", "afterFirstUnlock", "token"]).status == 3)
        let credentials = directory.path + "/creds"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        _ = directory.file("creds/keychain-passphrase", "s3same")
        #expect(
            try run(
                ["get", "--identifier", "Druidia", "--accessibility", "afterFirstUnlock", "token"],
                environment: ["CREDENTIALS_DIRECTORY": credentials]
            ).output == "afu\n")
        #expect(try run(["lock"]).status == 0)
    }

    @Test("an item behind userPresence is read only after the passphrase is typed on the controlling terminal (a pseudo-terminal)")
    func presenceOnTerminal() throws {
        let passphrase = directory.file("pw", "correct horse")
        #expect(try run(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        let set = try run(
            ["set", "--service", "bank", "--accessibility", "whenPasscodeSetThisDeviceOnly", "--access-control", "userPresence", "pin"],
            input: "4321", environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase])
        #expect(set.status == 0, "\(set.stderr)")
        let arguments = ["get", "--service", "bank", "--accessibility", "whenPasscodeSetThisDeviceOnly", "pin"]
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_KERNEL_KEYRING": "off",
            "KEYCHAIN_PATH": vaultPath, "KEYCHAIN_PASSPHRASE_FILE": passphrase,
        ]
        let typed = try Subprocess.runOnTerminal(KeychainExecutable.path, arguments, environment: environment, prompt: "Passphrase of", answer: "correct horse")
        #expect(typed.result.status == 0 && typed.result.output == "4321\n", "\(typed.result.stderr)")
        #expect(typed.terminal.contains(vaultPath) && !typed.terminal.contains("correct horse"), "the prompt names the vault; the answer is not echoed")
        let wrong = try Subprocess.runOnTerminal(KeychainExecutable.path, arguments, environment: environment, prompt: "Passphrase of", answer: "guess")
        #expect(wrong.result.status == 3 && wrong.result.output.isEmpty && wrong.result.stderr.contains("proof of presence"))
        let cancelled = try Subprocess.runOnTerminal(KeychainExecutable.path, arguments, environment: environment, prompt: "Passphrase of", answer: "")
        #expect(cancelled.result.status == 3 && cancelled.result.stderr.contains("cancelled"))
        let noTerminal = try run(arguments, environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase])
        #expect(noTerminal.status == 4 && noTerminal.stderr.contains("no controlling terminal") && noTerminal.output.isEmpty)
    }

    @Test("passwd changes and removes the passphrase")
    func passwd() throws {
        let first = directory.file("first", "one"), second = directory.file("second", "two")
        #expect(try run(["set", "--service", "s", "k"], input: "v").status == 0)
        #expect(try run(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": first]).status == 0)
        #expect(try run(["passwd"], environment: ["KEYCHAIN_PASSPHRASE_FILE": first, "KEYCHAIN_NEW_PASSPHRASE_FILE": second]).status == 0)
        #expect(try run(["get", "--service", "s", "k"], environment: ["KEYCHAIN_PASSPHRASE_FILE": first]).status == 3)
        #expect(try run(["get", "--service", "s", "k"], environment: ["KEYCHAIN_PASSPHRASE_FILE": second]).output == "v\n")
        #expect(try run(["passwd", "--remove"], environment: ["KEYCHAIN_PASSPHRASE_FILE": second]).status == 0)
        #expect(try run(["get", "--service", "s", "k"]).output == "v\n")
    }

    @Test("what the Valet API writes the command reads, and the reverse")
    func valetInterop() throws {
        let vault = try Vault(directory.vaultConfiguration(name: "cli.keychain"))
        let valet = ValetStore.withStore(vault) { Valet.valet(with: Identifier(nonEmpty: "Druidia")!, accessibility: .whenUnlocked) }
        try valet.setString("from Valet", forKey: "Skroob")
        #expect(try run(["get", "--identifier", "Druidia", "Skroob"]).output == "from Valet\n")
        #expect(try run(["set", "--identifier", "Druidia", "Helmet"], input: "from the command").status == 0)
        #expect(try valet.string(forKey: "Helmet") == "from the command")
        let shared = ValetStore.withStore(vault) {
            Valet.iCloudSharedGroupValet(
                with: SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")!, identifier: Identifier(nonEmpty: "v1"), accessibility: .afterFirstUnlock)
        }
        #expect(try run(["set", "--shared-group", "group.Druidia", "--identifier", "v1", "--icloud", "--accessibility", "afterFirstUnlock", "K"], input: "shared").status == 0)
        #expect(try shared.string(forKey: "K") == "shared")
        #expect(try valet.allKeys() == ["Skroob", "Helmet"])
    }

    @Test("no secret reaches the process's argv or environment, nor any error text")
    func secretsStayOut() throws {
        let secretValue = "UNIQUE-SECRET-\(UUID().uuidString)"
        let errorFile = directory.path + "/set.stderr"
        let (pid, stdin) = try Subprocess.launch(
            KeychainExecutable.path, ["set", "--identifier", "Druidia", "Skroob"],
            environment: ["KEYCHAIN_PATH": vaultPath, "HOME": directory.path], errorFile: errorFile)
        _ = Array(secretValue.utf8).withUnsafeBytes { write(stdin, $0.baseAddress, $0.count) }
        Thread.sleep(forTimeInterval: 0.2)
        // Read to the end: /proc files report a size of 0, and a sized read may stop early.
        let cmdline = FileHandle(forReadingAtPath: "/proc/\(pid)/cmdline")?.readDataToEndOfFile() ?? Data()
        let environ = FileHandle(forReadingAtPath: "/proc/\(pid)/environ")?.readDataToEndOfFile() ?? Data()
        close(stdin)
        #expect(Subprocess.wait(for: pid) == 0)
        #expect(!cmdline.isEmpty && cmdline.range(of: Data(secretValue.utf8)) == nil)
        #expect(environ.range(of: Data(secretValue.utf8)) == nil)
        // Provoke every kind of error around the stored secret and read what is said.
        var said = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
        for arguments in [
            ["set", "--identifier", "Druidia", "Skroob", "extra"], ["get", "--identifier", "Druidia", "--accessibility", "bad", "Skroob"],
            ["get", "--vault", directory.path + "/missing/dir/x.keychain", "--identifier", "Druidia", "Skroob"], ["list", "--bogus"],
        ] {
            said += try run(arguments, input: secretValue).stderr
        }
        _ = try run(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": directory.file("np", "pass-\(secretValue)")])
        said += try run(["get", "--identifier", "Druidia", "Skroob"], environment: ["KEYCHAIN_PASSPHRASE_FILE": directory.file("bad", "wrong-\(secretValue)")]).stderr
        #expect(!said.isEmpty)
        #expect(!said.contains(secretValue))
    }

    @Test("every command has --help with an example, and the overview lists the exit statuses")
    func help() throws {
        let overview = try run(["--help"])
        #expect(overview.status == 0 && overview.output.contains("Exit status") && overview.output.contains("keychain set"))
        for command in ["set", "get", "contains", "remove", "list", "clear", "unlock", "lock", "passwd", "generate", "status"] {
            let help = try run([command, "--help"])
            #expect(help.status == 0 && help.output.contains("Example") && help.output.contains("keychain \(command)"), "\(command)")
        }
    }

    @Test("generate prints a Safari-style password, and stores it when given an item")
    func generate() throws {
        let printed = try run(["generate"])
        #expect(printed.status == 0 && printed.output.range(of: #"^[a-zA-Z2-9]{3}(-[a-zA-Z2-9]{3}){3}\n$"#, options: .regularExpression) != nil)
        let stored = try run(["generate", "--identifier", "Druidia", "Generated"])
        #expect(stored.status == 0)
        #expect(try run(["get", "--identifier", "Druidia", "Generated"]).output == stored.output)
    }
}
