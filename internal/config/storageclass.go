package config

import "strings"

// StorageClasses are the S3 storage classes a table's data files may take
// (storage_class), as the AWS SDK's types.StorageClass names them. The
// SDK's OUTPOSTS, SNOW, FSX_* and AWS_BACKUP_* classes belong to other
// products, not to a bucket's PUT. GLACIER and DEEP_ARCHIVE are left out on
// purpose: their objects cannot be read until restored, so compaction and
// every reader would fail on the table's newest files (GLACIER_IR reads at
// once and is allowed).
var StorageClasses = []string{
	"STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING",
	"GLACIER_IR", "EXPRESS_ONEZONE",
}

// archiveClasses are S3 classes refused with their own reason.
var archiveClasses = []string{"GLACIER", "DEEP_ARCHIVE"}

// checkStorageClass validates a mapping's storage_class: empty (the
// bucket's default, nothing sent) or one of StorageClasses, spelt as S3
// spells it (the header is case-sensitive).
func checkStorageClass(t *Table, f func(string) string, bad func(field, format string, args ...any)) {
	sc := t.StorageClass
	if sc == "" {
		return
	}
	table := t.Namespace + "." + t.Name
	if t.Name == "" {
		table = t.Namespace + ".{topic}"
	}
	for _, c := range StorageClasses {
		if sc == c {
			return
		}
	}
	for _, c := range archiveClasses {
		if strings.EqualFold(sc, c) {
			bad(f("storage_class"), "%s for table %s: archived objects cannot be read until restored, so readers and compaction would fail; use one of %s, or leave it empty for the bucket's default",
				c, table, strings.Join(StorageClasses, ", "))
			return
		}
	}
	bad(f("storage_class"), "%q for table %s is not an S3 storage class: use one of %s (upper case), or leave it empty for the bucket's default",
		sc, table, strings.Join(StorageClasses, ", "))
}
