// On Apple platforms `import Foundation` brings the Security framework's names (kSecClass,
// kCFBooleanTrue...) into every file, and Valet users write migration queries with them
// without importing Security. Here Valet brings the package's `Security` module the same way,
// so those queries compile unchanged and a file importing both sees one name, not two.
@_exported import Security
