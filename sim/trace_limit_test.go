package sim

import "testing"

func TestRecordCollectorLimit(t *testing.T) {
	c := &RecordCollector{Limit: 3}
	for i := range 5 {
		c.Record(&TraceRecord{I: int64(i)})
	}
	if len(c.Records) != 3 || c.Dropped != 2 || c.Records[2].I != 2 {
		t.Fatalf("kept %d, dropped %d", len(c.Records), c.Dropped)
	}
}
