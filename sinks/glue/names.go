package glue

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxName is the longest database or table name Glue takes (1 to 255
// characters; Athena reads the same). Floe's own names stop at 255 bytes
// per part (internal/names), but a Glue database joins every level of a
// namespace and the database prefix, and a Delta entry adds DeltaSuffix,
// so a name can pass Floe's rule and still be too long for Glue.
const MaxName = 255

// glueNames returns the Glue database and table name of ident, the table
// name followed by suffix, or ErrNameTooLong naming which one is too long,
// before any request: Glue would refuse it with a validation error on
// every retry.
func (s *Syncer) glueNames(ident []string, suffix string) (db, tbl string, err error) {
	db = s.Database(ident[:len(ident)-1])
	tbl = strings.ToLower(ident[len(ident)-1]) + suffix
	if err := checkName("database", db); err != nil {
		return "", "", err
	}
	if err := checkName("table", tbl); err != nil {
		return "", "", err
	}
	return db, tbl, nil
}

// checkName refuses a Glue name longer than MaxName, quoting at most its
// first 64 characters.
func checkName(kind, name string) error {
	n := utf8.RuneCountInString(name)
	if n <= MaxName {
		return nil
	}
	quoted := name
	if len(quoted) > 64 {
		quoted = quoted[:64] + "..."
	}
	return fmt.Errorf("glue %s name %q is %d characters: %w (%d); shorten the namespace, the table name or catalogs.glue.database_prefix",
		kind, quoted, n, ErrNameTooLong, MaxName)
}
