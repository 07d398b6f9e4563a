#include <sqlite3.h>

// Extended result codes are function-like macros, which Swift does not import: by name here.
static const int csqlite_ioerr_write = SQLITE_IOERR_WRITE;
static const int csqlite_ioerr_fsync = SQLITE_IOERR_FSYNC;
static const int csqlite_ioerr_truncate = SQLITE_IOERR_TRUNCATE;

// SQLITE_TRANSIENT is a cast macro Swift cannot import: it tells SQLite to copy the bound bytes.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

// sqlite3_db_config is variadic; these are the only uses we need.
static inline int csqlite_enable_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}

// A schema is never trusted: functions with side effects cannot run from a view or trigger
// planted in the file (the vault also refuses any schema but its own).
static inline int csqlite_distrust_schema(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
}
