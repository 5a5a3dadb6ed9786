// Package localfs is the file IO Floe opens file:// warehouses with:
// iceberg-go's local file system, except that a file:// location names
// the file whose path is the bytes after file:// (and an optional
// localhost authority), taken literally as an object key is on S3.
//
// iceberg-go v0.7.0's LocalFS percent-decodes a file:// location. The
// manifest of a table partitioned on a value that needs escaping records
// region=100%25 (Iceberg's, and Java's, URL-encoded partition path), so
// the file landed at region=100% and a/b (a%2Fb) became two directories;
// every other reader (PyIceberg, DuckDB, Java, Trino, and the Delta log,
// which escapes the recorded path once more) looks for region=100%25 and
// fails. With this IO the string in the manifest is the file's path, on
// file:// as on S3. Install replaces iceberg-go's factory for the file
// scheme, as internal/objstore does for s3, so every component that opens
// the warehouse through io.LoadFS uses it.
package localfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	icebergio "github.com/apache/iceberg-go/io"
)

var once sync.Once

// Install makes every file:// FileIO opened from now on an FS. It is
// idempotent.
func Install() {
	once.Do(func() {
		icebergio.Unregister("file")
		icebergio.Register("file", func(context.Context, *url.URL, map[string]string) (icebergio.IO, error) {
			return FS{}, nil
		})
	})
}

// FS is iceberg-go's LocalFS with file:// locations taken literally. A
// file an older Floe wrote at the decoded path of its recorded location
// (region=100% for region=100%25) is still read there when the literal
// path does not exist, so such a table can be read and compacted; it is
// never removed through its recorded location (only by orphan cleanup,
// once nothing references it).
type FS struct{}

var local icebergio.LocalFS

// osPath is the local path of name: a file:// URI's path as written, a
// plain path as is.
func osPath(name string) (string, error) {
	if len(name) < 5 || !strings.EqualFold(name[:5], "file:") {
		return name, nil
	}
	rest := name[5:]
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		host, p, found := strings.Cut(after, "/")
		if host != "" && !strings.EqualFold(host, "localhost") {
			return "", fmt.Errorf("unsupported file URI authority %q in %s", host, name)
		}
		rest = "/" + p
		if !found {
			rest = "/"
		}
	}
	return filepath.FromSlash(rest), nil
}

// legacyPath is where iceberg-go's LocalFS put name: its percent-decoded
// path, when that differs from the literal one.
func legacyPath(name, literal string) (string, bool) {
	if len(name) < 5 || !strings.EqualFold(name[:5], "file:") {
		return "", false
	}
	u, err := url.Parse(name)
	if err != nil || u.Opaque != "" {
		return "", false
	}
	p := filepath.FromSlash(u.Path)
	return p, p != literal
}

// read runs op on name's literal path, and on its legacy path when the
// literal one does not exist.
func read[T any](name string, op func(string) (T, error)) (T, error) {
	p, err := osPath(name)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := op(p)
	if errors.Is(err, fs.ErrNotExist) {
		if old, ok := legacyPath(name, p); ok {
			if v2, err2 := op(old); err2 == nil {
				return v2, nil
			}
		}
	}
	return v, err
}

// Open implements icebergio.IO.
func (FS) Open(name string) (icebergio.File, error) { return read(name, local.Open) }

// ReadFile implements icebergio.ReadFileIO.
func (FS) ReadFile(name string) ([]byte, error) { return read(name, local.ReadFile) }

// Stat implements icebergio.StatIO.
func (FS) Stat(name string) (fs.FileInfo, error) { return read(name, local.Stat) }

// ReadDir lists a directory.
func (FS) ReadDir(name string) ([]fs.DirEntry, error) { return read(name, local.ReadDir) }

func write(name string, op func(string) error) error {
	p, err := osPath(name)
	if err != nil {
		return err
	}
	return op(p)
}

// Create implements icebergio.WriteFileIO.
func (FS) Create(name string) (icebergio.FileWriter, error) {
	p, err := osPath(name)
	if err != nil {
		return nil, err
	}
	return local.Create(p)
}

// WriteFile implements icebergio.WriteFileIO.
func (FS) WriteFile(name string, content []byte) error {
	return write(name, func(p string) error { return local.WriteFile(p, content) })
}

// Remove implements icebergio.IO.
func (FS) Remove(name string) error { return write(name, local.Remove) }

// RemoveAll removes a directory tree.
func (FS) RemoveAll(name string) error { return write(name, local.RemoveAll) }

// MkdirAll creates a directory and its parents.
func (FS) MkdirAll(name string) error { return write(name, local.MkdirAll) }

// Mkdir creates a directory.
func (FS) Mkdir(name string) error { return write(name, local.Mkdir) }

// Rename renames a file.
func (FS) Rename(oldpath, newpath string) error {
	return write(oldpath, func(src string) error {
		return write(newpath, func(dst string) error { return local.Rename(src, dst) })
	})
}

// RenameNoReplace renames a file unless the target exists.
func (FS) RenameNoReplace(oldpath, newpath string) error {
	return write(oldpath, func(src string) error {
		return write(newpath, func(dst string) error { return local.RenameNoReplace(src, dst) })
	})
}

// WalkDir implements icebergio.ListableIO. Under a file:// root each path
// is passed as the file:// location that names it (file:// and the path),
// so that iceberg-go's orphan planning, which compares listed paths with
// recorded ones after decoding both, compares like with like. A path that
// is no valid URI path (a raw %, ? or #: only files an older Floe wrote
// at a decoded location have one) is passed plain: it then matches, as
// before, the recorded location it was decoded from.
func (FS) WalkDir(root string, fn fs.WalkDirFunc) error {
	p, err := osPath(root)
	if err != nil {
		return err
	}
	if p == root { // a plain path: plain paths, as LocalFS gives
		return local.WalkDir(p, fn)
	}
	return local.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		return fn(location(path), d, err)
	})
}

// location is the file:// location of a local path, or the path itself
// when the location would not name it.
func location(p string) string {
	loc := "file://" + filepath.ToSlash(p)
	u, err := url.Parse(loc)
	if err != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return p
	}
	return loc
}
