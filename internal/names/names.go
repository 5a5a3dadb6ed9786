package names

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Limits. A name part is one path element on the local file system, where
// 255 bytes is the common NAME_MAX (ext4, xfs, APFS); Glue's database and
// table names stop at 255 characters as well, and an S3 key at 1024 bytes
// holds a few such parts.
const (
	// MaxName is the longest namespace part or table name, in bytes.
	MaxName = 255
	// MaxNamespaceDepth is how many parts a namespace may have.
	MaxNamespaceDepth = 8
	// MaxProperties is how many entries a property map may hold.
	MaxProperties = 100
	// MaxPropertyKey and MaxPropertyValue bound one property, in bytes.
	MaxPropertyKey   = 255
	MaxPropertyValue = 4096
)

// ErrInvalid: a name or a property map breaks a rule; the error names the
// field and the rule.
var ErrInvalid = errors.New("invalid name")

// Check returns nil when s is a legal namespace part or table name: 1 to
// MaxName bytes of ASCII letters, digits, '_' and '-', not starting with
// '-'. These characters need no escaping in an S3 key or a URL, are legal
// file names everywhere, and are what Glue accepts once lowercased (the
// Glue mirror lowercases). field names what is checked in the error.
func Check(field, s string) error {
	if r := Reason(s); r != "" {
		return fmt.Errorf("%w: %s: %s", ErrInvalid, field, r)
	}
	return nil
}

// Reason is why s is not a legal name ("" when it is), for callers that
// name the field their own way.
func Reason(s string) string {
	if s == "" {
		return "empty"
	}
	if len(s) > MaxName {
		return fmt.Sprintf("%d bytes, longer than %d (%s)", len(s), MaxName, Preview(s))
	}
	if s[0] == '-' {
		return Preview(s) + " starts with '-'"
	}
	for i := 0; i < len(s); i++ {
		if !legal(s[i]) {
			return fmt.Sprintf("%s has %s at byte %d: use letters, digits, '_' and '-'", Preview(s), describe(s[i:]), i)
		}
	}
	return ""
}

// CheckNamespace checks every part of a namespace and their count.
func CheckNamespace(field string, parts []string) error {
	if len(parts) == 0 {
		return fmt.Errorf("%w: %s: empty", ErrInvalid, field)
	}
	if len(parts) > MaxNamespaceDepth {
		return fmt.Errorf("%w: %s: %d levels, more than %d", ErrInvalid, field, len(parts), MaxNamespaceDepth)
	}
	for i, p := range parts {
		f := field
		if len(parts) > 1 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		if err := Check(f, p); err != nil {
			return err
		}
	}
	return nil
}

// CheckProperties bounds a property map: at most MaxProperties entries,
// keys of 1 to MaxPropertyKey bytes and values of at most MaxPropertyValue
// bytes, both valid UTF-8 without control characters.
func CheckProperties(field string, props map[string]string) error {
	if len(props) > MaxProperties {
		return fmt.Errorf("%w: %s: %d properties, more than %d", ErrInvalid, field, len(props), MaxProperties)
	}
	for k, v := range props {
		if err := CheckText(field+" key", k, MaxPropertyKey); err != nil {
			return err
		}
		if k == "" {
			return fmt.Errorf("%w: %s: empty key", ErrInvalid, field)
		}
		if err := CheckText(field+"["+Preview(k)+"]", v, MaxPropertyValue); err != nil {
			return err
		}
	}
	return nil
}

// CheckText bounds a free-form string (a regular expression, a subject):
// at most max bytes of valid UTF-8 without control characters.
func CheckText(field, s string, max int) error {
	if r := TextReason(s, max); r != "" {
		return fmt.Errorf("%w: %s: %s", ErrInvalid, field, r)
	}
	return nil
}

// TextReason is why s breaks CheckText's rule ("" when it does not).
func TextReason(s string, max int) string {
	if len(s) > max {
		return fmt.Sprintf("%d bytes, longer than %d", len(s), max)
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	for i, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Sprintf("control character %U at byte %d", r, i)
		}
	}
	return ""
}

func legal(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// describe names the offending character so that an invisible one (NUL, a
// control character) is readable in the error.
func describe(rest string) string {
	r, _ := utf8.DecodeRuneInString(rest)
	if r == utf8.RuneError {
		return fmt.Sprintf("byte 0x%02x", rest[0])
	}
	return fmt.Sprintf("%U %q", r, r)
}

// previewLen is how much of a rejected name an error repeats: enough to
// recognize it, never the 100 MB a client sent.
const previewLen = 64

// Preview quotes s, shortened to previewLen bytes.
func Preview(s string) string {
	if len(s) <= previewLen {
		return fmt.Sprintf("%q", s)
	}
	cut := previewLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...", s[:cut])
}
