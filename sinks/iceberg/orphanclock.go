package iceberg

import (
	"fmt"
	"io/fs"
	"time"

	iceio "github.com/apache/iceberg-go/io"
)

// Orphan cleanup by the object store's clock. iceberg-go picks candidates
// older than the safety age by this node's clock (time.Now against each
// file's modification time, which the store stamps). A node whose clock is
// ahead of the store's by more than the age would take a file a flush
// wrote a moment ago, not yet recorded, for an old orphan. So a candidate
// is deleted only when it is also older than the age before the table's
// current metadata file, whose time is the store's: the table's last
// commit by the store's clock, never after the store's now. On a table
// that commits this costs nothing (its metadata file is seconds old); on
// an idle one the files written after its last commit wait for the next.

// storeTimes lists root once and returns every file's modification time,
// keyed without scheme, and the current metadata file's.
func storeTimes(fsys iceio.IO, root, metadata string) (map[string]time.Time, time.Time, error) {
	lister, ok := fsys.(iceio.ListableIO)
	if !ok {
		return nil, time.Time{}, fmt.Errorf("listing %s: file system %T cannot list", root, fsys)
	}
	mod := map[string]time.Time{}
	err := lister.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mod[stripScheme(p)] = info.ModTime()
		return nil
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("listing %s: %w", root, err)
	}
	if ref, ok := mod[stripScheme(metadata)]; ok {
		return mod, ref, nil
	}
	f, err := fsys.Open(metadata) // written outside the location (write.metadata.path)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading the time of %s: %w", metadata, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading the time of %s: %w", metadata, err)
	}
	return mod, info.ModTime(), nil
}

// oldByStore reports whether the file at p is older than minAge before the
// table's last commit (ref), by the store's clock. A file the listing did
// not see is kept.
func oldByStore(mod map[string]time.Time, ref time.Time, p string, minAge time.Duration) bool {
	t, ok := mod[stripScheme(p)]
	return ok && !t.After(ref.Add(-minAge))
}
