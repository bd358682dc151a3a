package schedulecontroller

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestDecide: one Backup per due time, made once however many were
// missed, never beside one still running; retention keeps the newest and
// lets go what is past the count or the age, and failures a newer
// success replaced. Careless variants watched failing: a Backup for every
// missed time (three made after an outage), one made while the last
// still runs, and the count applied with the newest expired by age.
func TestDecide(t *testing.T) {
	daily, err := cron.ParseStandard("0 3 * * *")
	if err != nil {
		t.Fatal(err)
	}
	day := func(d, h int) time.Time { return time.Date(2026, 12, d, h, 0, 0, 0, time.UTC) }
	ok := func(name string, d int) taken {
		return taken{name: name, phase: v1alpha1.BackupSucceeded, made: day(d, 3), finished: day(d, 3).Add(time.Minute)}
	}
	for _, tc := range []struct {
		name       string
		o          observation
		wantMake   string
		wantExpire []string
		wantNext   time.Time
	}{
		{name: "not due yet", o: observation{now: day(7, 2), since: day(6, 12)},
			wantNext: day(7, 3)},
		{name: "due", o: observation{now: day(7, 3).Add(time.Second), since: day(6, 12)},
			wantMake: "s-" + itoa(day(7, 3)), wantNext: day(8, 3)},
		{name: "three missed: one Backup, for the latest", o: observation{now: day(7, 4), since: day(4, 3)},
			wantMake: "s-" + itoa(day(7, 3)), wantNext: day(8, 3)},
		{name: "the last still runs", o: observation{now: day(7, 4), since: day(6, 3),
			backups: []taken{{name: "s-old", phase: v1alpha1.BackupRunning, made: day(6, 3)}}},
			wantNext: day(7, 4).Add(time.Minute)},
		{name: "suspended", o: observation{now: day(7, 4), since: day(6, 3), suspend: true},
			wantNext: day(8, 3)},
		{name: "count", o: observation{now: day(7, 2), since: day(6, 3), keep: retention{count: 2},
			backups: []taken{ok("a", 4), ok("b", 5), ok("c", 6)}},
			wantExpire: []string{"a"}, wantNext: day(7, 3)},
		{name: "age, the newest kept", o: observation{now: day(20, 2), since: day(19, 3), keep: retention{age: 48 * time.Hour},
			backups: []taken{ok("a", 4), ok("b", 5), ok("c", 6)}},
			wantExpire: []string{"a", "b"}, wantNext: day(20, 3)},
		{name: "failures before a success go, after it stay", o: observation{now: day(7, 2), since: day(6, 3), keep: retention{count: 5},
			backups: []taken{{name: "f1", phase: v1alpha1.BackupFailed, made: day(4, 3)}, ok("b", 5),
				{name: "f2", phase: v1alpha1.BackupFailed, made: day(6, 3)}}},
			wantExpire: []string{"f1"}, wantNext: day(7, 3)},
	} {
		tc.o.schedule = daily
		got := decide(tc.o, "s")
		if got.make != tc.wantMake || !slices.Equal(got.expire, tc.wantExpire) || !got.next.Equal(tc.wantNext) {
			t.Errorf("%s: make %q expire %v next %s; want %q %v %s", tc.name, got.make, got.expire, got.next, tc.wantMake, tc.wantExpire, tc.wantNext)
		}
	}
}

func itoa(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
